package command

import (
	"errors"
	"io"
)

// errEscapeExit ends an exec session the operator left with the escape
// sequence.
var errEscapeExit = errors.New("session ended by the escape sequence")

// escapeReader passes the operator's keys through, except the escape
// sequence: at the start of a line, the escape character then '.' ends
// the session (Read returns errEscapeExit), and the escape character
// twice sends it once.
type escapeReader struct {
	r         io.Reader
	esc       byte
	lineStart bool
	pending   bool // an escape character at a line start was read
	buf       []byte
}

func newEscapeReader(r io.Reader, esc byte) *escapeReader {
	return &escapeReader{r: r, esc: esc, lineStart: true}
}

func (e *escapeReader) Read(p []byte) (int, error) {
	// Each byte read may come out as two (a held escape character and
	// the byte after it).
	want := max(1, len(p)/2)
	if len(e.buf) < want {
		e.buf = make([]byte, want)
	}
	n, err := e.r.Read(e.buf[:want])
	out := p[:0]
	for _, b := range e.buf[:n] {
		switch {
		case e.pending:
			e.pending = false
			switch b {
			case '.':
				return len(out), errEscapeExit
			case e.esc:
				out = append(out, b)
			default:
				out = append(out, e.esc, b)
			}
		case e.lineStart && b == e.esc:
			e.pending = true
			continue
		default:
			out = append(out, b)
		}
		e.lineStart = b == '\r' || b == '\n'
	}
	return len(out), err
}
