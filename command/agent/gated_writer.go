package agent

import (
	"bytes"
	"io"
	"sync"
)

// gatedWriter holds what is written to it until Flush, then writes
// through. The agent logs while it starts; holding those lines keeps them
// after the configuration summary instead of interleaved with it.
type gatedWriter struct {
	mu      sync.Mutex
	out     io.Writer
	buf     bytes.Buffer
	flushed bool
}

func newGatedWriter(out io.Writer) *gatedWriter { return &gatedWriter{out: out} }

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.flushed {
		return g.out.Write(p)
	}
	return g.buf.Write(p)
}

// Flush writes what was held and opens the gate.
func (g *gatedWriter) Flush() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.flushed = true
	_, err := g.buf.WriteTo(g.out)
	return err
}
