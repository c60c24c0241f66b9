package client

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/opennomad/nomad/client/allocdir"
	"github.com/opennomad/nomad/client/logmon"
)

// Log stream names and offset origins of the logs API.
const (
	LogStdout   = "stdout"
	LogStderr   = "stderr"
	OriginStart = "start"
	OriginEnd   = "end"
)

// File events a log stream reports, worded as Nomad words them.
const (
	FileEventTruncated = "file truncated"
)

// Log reading knobs.
const (
	// logFrameSize is the most data one frame carries.
	logFrameSize = 64 * 1024
	// logPollInterval is how often a followed log is checked for more
	// output or a newer file.
	logPollInterval = 100 * time.Millisecond
)

// LogRequest selects a task's log and where to start reading it.
type LogRequest struct {
	Task string
	// Type is LogStdout or LogStderr.
	Type string
	// Origin is OriginStart (Offset counts from the start of the oldest
	// file kept) or OriginEnd (Offset counts back from the end of the
	// newest); "" means OriginStart.
	Origin string
	Offset int64
	// Follow keeps the reader waiting for more output, across rotations,
	// until it is closed. Without it the reader ends at the end of the
	// file that was newest when it opened.
	Follow bool
}

// StreamFrame is one piece of a log stream, Nomad's frame: Data read
// from File (relative to the allocation directory), Offset the position
// in File after Data. A frame with FileEvent set reports a change to
// File instead of data.
type StreamFrame struct {
	Offset    int64  `json:",omitempty"`
	Data      []byte `json:",omitempty"`
	File      string `json:",omitempty"`
	FileEvent string `json:",omitempty"`
}

// LogReader reads one of a task's logs across its numbered files
// (<task>.<type>.0, .1, ...) as the log rotator writes them: when the
// file being read ends and a newer one exists, it moves on; when the
// file it would move to was already rotated away, it skips to the oldest
// one left. Next returns frames; Read returns the bytes alone.
// Next and Read are for one goroutine; Close may be called from any.
type LogReader struct {
	dir    string // host directory of the log files
	relDir string // the same, relative to the alloc directory
	base   string // "<task>.<type>"
	follow bool
	// last is, without follow, the newest file's index at open: the
	// reader ends with it.
	last int
	poll time.Duration

	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	idx    int
	offset int64
	file   *os.File
	closed bool

	// rest is what Read has not handed out of the last frame.
	rest []byte
	// buf is read into; frames get copies of what was read, so that
	// reads finding nothing (a followed log at its end) cost nothing.
	buf []byte
}

// Logs opens a task's log. It fails when the request is malformed, the
// allocation or task is unknown, the task never started, or it left no
// log of that type.
func (c *Client) Logs(allocID string, req LogRequest) (*LogReader, error) {
	switch {
	case req.Task == "":
		return nil, invalid("must provide task name")
	case req.Type != LogStdout && req.Type != LogStderr:
		return nil, invalid("must provide log type (stdout/stderr)")
	}
	switch req.Origin {
	case "":
		req.Origin = OriginStart
	case OriginStart, OriginEnd:
	default:
		return nil, invalid("origin must be start or end")
	}
	if req.Offset < 0 {
		return nil, invalid("offset must be >= 0, got %d", req.Offset)
	}
	ar, err := c.runner(allocID)
	if err != nil {
		return nil, err
	}
	tr := ar.TaskRunner(req.Task)
	if tr == nil {
		return nil, invalid("unknown task name %q", req.Task)
	}
	if tr.TaskState().StartedAt.IsZero() {
		return nil, notFound("task %q not started yet. No logs available", req.Task)
	}
	return openLog(ar.AllocDir().LogDir, req)
}

// openLog positions a reader per req in the log files under dir.
func openLog(dir string, req LogRequest) (*LogReader, error) {
	r := &LogReader{
		dir:    dir,
		relDir: filepath.Join(allocdir.SharedAllocName, allocdir.LogDirName),
		base:   req.Task + "." + req.Type,
		follow: req.Follow,
		poll:   logPollInterval,
		buf:    make([]byte, logFrameSize),
	}
	files, err := r.list()
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, notFound("log entry for task %q and log type %q not found", req.Task, req.Type)
	}
	r.last = files[len(files)-1].idx
	r.idx, r.offset = startPosition(files, req.Origin, req.Offset)
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r, nil
}

// logFile is one numbered file of a log and its size.
type logFile struct {
	idx  int
	size int64
}

// list returns the log's files, oldest first.
func (r *LogReader) list() ([]logFile, error) {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fsError(r.relDir, err)
	}
	var out []logFile
	for _, idx := range logmon.LogIndexes(entries, r.base) {
		info, err := os.Stat(r.path(idx))
		if err != nil {
			continue // rotated away meanwhile
		}
		out = append(out, logFile{idx: idx, size: info.Size()})
	}
	return out, nil
}

func (r *LogReader) path(idx int) string { return filepath.Join(r.dir, r.name(idx)) }
func (r *LogReader) name(idx int) string { return r.base + "." + strconv.Itoa(idx) }

// relPath names a log file as callers see it: relative to the alloc
// directory, whose place on the host is the client's business.
func (r *LogReader) relPath(idx int) string { return filepath.Join(r.relDir, r.name(idx)) }

// startPosition turns an origin and offset over the concatenated files
// into a file and an offset in it. Offsets beyond either end stop at that
// end.
func startPosition(files []logFile, origin string, offset int64) (int, int64) {
	if origin == OriginEnd {
		i := len(files) - 1
		pos := files[i].size - offset
		for pos < 0 && i > 0 {
			i--
			pos += files[i].size
		}
		return files[i].idx, max(pos, 0)
	}
	i := 0
	pos := offset
	for pos > files[i].size && i < len(files)-1 {
		pos -= files[i].size
		i++
	}
	return files[i].idx, min(pos, files[i].size)
}

// Next returns the next frame: data, or a file event. Without follow it
// returns io.EOF after the last data; with follow it waits for more until
// ctx is done or the reader is closed (then it returns that error, or
// io.EOF for Close).
func (r *LogReader) Next(ctx context.Context) (*StreamFrame, error) {
	for {
		frame, wait, err := r.step()
		if frame != nil || err != nil {
			return frame, err
		}
		if !wait {
			continue
		}
		t := time.NewTimer(r.poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-r.ctx.Done():
			t.Stop()
			return nil, io.EOF
		case <-t.C:
		}
	}
}

// step makes one move: it returns a frame, or asks to wait for more
// output (wait), or to be called again (neither).
func (r *LogReader) step() (frame *StreamFrame, wait bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, false, io.EOF
	}
	if r.file == nil {
		f, err := os.Open(r.path(r.idx))
		switch {
		case err == nil:
			r.file = f
		case errors.Is(err, fs.ErrNotExist):
			// Rotated away before it was read, or not written yet.
			return r.advance()
		default:
			return nil, false, fsError(r.relPath(r.idx), err)
		}
	}
	n, err := r.file.ReadAt(r.buf, r.offset)
	if n > 0 {
		return r.frame(n), false, nil
	}
	if err != nil && err != io.EOF {
		return nil, false, fsError(r.relPath(r.idx), err)
	}
	if info, err := r.file.Stat(); err == nil && info.Size() < r.offset {
		r.offset = 0
		return &StreamFrame{File: r.relPath(r.idx), FileEvent: FileEventTruncated}, false, nil
	}
	return r.advance()
}

// advance is called at the end of the current file: it moves to the next
// file if one exists. The rotator writes a file completely before it
// creates the next, so once a newer file is seen, one more read of the
// current one finds everything it will ever hold; only then the reader
// moves on.
func (r *LogReader) advance() (*StreamFrame, bool, error) {
	files, err := r.list()
	if err != nil {
		return nil, false, err
	}
	i := slices.IndexFunc(files, func(f logFile) bool { return f.idx > r.idx })
	if i < 0 {
		if !r.follow && r.idx >= r.last {
			return nil, false, io.EOF
		}
		return nil, true, nil
	}
	if r.file != nil {
		// Drain what was written before the newer file appeared.
		if n, _ := r.file.ReadAt(r.buf, r.offset); n > 0 {
			return r.frame(n), false, nil
		}
		r.file.Close()
		r.file = nil
	}
	if !r.follow && files[i].idx > r.last {
		return nil, false, io.EOF
	}
	r.idx, r.offset = files[i].idx, 0
	return nil, false, nil
}

// frame hands out the n bytes just read at the current offset.
func (r *LogReader) frame(n int) *StreamFrame {
	r.offset += int64(n)
	return &StreamFrame{Offset: r.offset, Data: slices.Clone(r.buf[:n]), File: r.relPath(r.idx)}
}

// Read implements io.Reader over the log's bytes, without frames.
func (r *LogReader) Read(p []byte) (int, error) {
	for len(r.rest) == 0 {
		frame, err := r.Next(r.ctx)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				err = io.EOF
			}
			return 0, err
		}
		r.rest = frame.Data
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// Close ends the reader; a Next or Read waiting for output returns.
func (r *LogReader) Close() error {
	r.cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.file != nil {
		err := r.file.Close()
		r.file = nil
		return err
	}
	return nil
}
