package client

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/opennomad/nomad/client/logmon"
)

// BenchmarkLogReader reads 8 MiB of output rotated over 1 MiB files from
// the start, frame by frame, as the logs API does.
func BenchmarkLogReader(b *testing.B) {
	dir := b.TempDir()
	line := bytes.Repeat([]byte("x"), 127)
	line = append(line, '\n')
	w, err := logmon.NewFileRotator(dir, "web.stdout", 10, 1<<20)
	if err != nil {
		b.Fatal(err)
	}
	for written := 0; written < 8<<20; written += len(line) {
		if _, err := w.Write(line); err != nil {
			b.Fatal(err)
		}
	}
	w.Close()
	b.SetBytes(8 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := openLog(dir, LogRequest{Task: "web", Type: LogStdout})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			f, err := r.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n += len(f.Data)
		}
		r.Close()
		if n < 8<<20 {
			b.Fatalf("read %d bytes", n)
		}
	}
}
