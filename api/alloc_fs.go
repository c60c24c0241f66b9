package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Origins of a log or file offset.
const (
	OriginStart = "start"
	OriginEnd   = "end"
)

// AllocFileInfo describes a file in an allocation directory.
type AllocFileInfo struct {
	Name        string
	IsDir       bool
	Size        int64
	FileMode    string
	ModTime     time.Time
	ContentType string
}

// StreamFrame is one frame of a log stream: Data read from File (relative
// to the allocation directory), Offset the position in File after Data.
// A frame with FileEvent set ("file truncated") reports a change instead.
type StreamFrame struct {
	Offset    int64  `json:",omitempty"`
	Data      []byte `json:",omitempty"`
	File      string `json:",omitempty"`
	FileEvent string `json:",omitempty"`
}

// IsHeartbeat reports an empty frame, which streams send while idle.
func (f *StreamFrame) IsHeartbeat() bool {
	return len(f.Data) == 0 && f.FileEvent == "" && f.File == "" && f.Offset == 0
}

// AllocFS reads allocation directories and task logs on the client
// running the allocation (/v1/client/fs).
type AllocFS struct {
	client *Client
}

// AllocFS returns the allocation file system endpoints.
func (c *Client) AllocFS() *AllocFS { return &AllocFS{client: c} }

// List lists a directory of the allocation ("/" is its root).
func (a *AllocFS) List(alloc *Allocation, path string, q *QueryOptions) ([]*AllocFileInfo, *QueryMeta, error) {
	var out []*AllocFileInfo
	qm, err := a.client.query("/v1/client/fs/ls/"+escape(alloc.ID)+"?path="+url.QueryEscape(path), &out, q)
	return out, qm, err
}

// Stat describes one file of the allocation.
func (a *AllocFS) Stat(alloc *Allocation, path string, q *QueryOptions) (*AllocFileInfo, *QueryMeta, error) {
	var out AllocFileInfo
	qm, err := a.client.query("/v1/client/fs/stat/"+escape(alloc.ID)+"?path="+url.QueryEscape(path), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Cat returns the contents of a file; the caller closes it.
func (a *AllocFS) Cat(alloc *Allocation, path string, q *QueryOptions) (io.ReadCloser, error) {
	return a.client.rawQuery("/v1/client/fs/cat/"+escape(alloc.ID)+"?path="+url.QueryEscape(path), q)
}

// ReadAt returns up to limit bytes (all when limit <= 0) of a file from
// offset; the caller closes it.
func (a *AllocFS) ReadAt(alloc *Allocation, path string, offset, limit int64, q *QueryOptions) (io.ReadCloser, error) {
	return a.client.rawQuery(fmt.Sprintf("/v1/client/fs/readat/%s?path=%s&offset=%d&limit=%d",
		escape(alloc.ID), url.QueryEscape(path), offset, limit), q)
}

// Logs streams a task's log (logType "stdout" or "stderr") from offset
// bytes after the start, or before the end, of what is kept (origin).
// Frames arrive on the first channel, heartbeats left out; it is closed
// at the end of the log when not following, or when cancel is closed or
// q's context ends. An error ends the stream on the second channel.
func (a *AllocFS) Logs(alloc *Allocation, follow bool, task, logType, origin string, offset int64,
	cancel <-chan struct{}, q *QueryOptions) (<-chan *StreamFrame, <-chan error) {
	errCh := make(chan error, 1)
	path := fmt.Sprintf("/v1/client/fs/logs/%s?follow=%t&task=%s&type=%s&origin=%s&offset=%d",
		escape(alloc.ID), follow, url.QueryEscape(task), url.QueryEscape(logType), url.QueryEscape(origin), offset)
	body, err := a.client.rawQuery(path, q)
	if err != nil {
		errCh <- err
		return nil, errCh
	}
	frames := make(chan *StreamFrame, 10)
	go func() {
		defer close(frames)
		defer body.Close()
		// A cancel closes the body, which ends the decoder's read.
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			select {
			case <-cancel:
				body.Close()
			case <-stop:
			}
		}()
		dec := json.NewDecoder(body)
		for {
			var f StreamFrame
			if err := dec.Decode(&f); err != nil {
				select {
				case <-cancel:
				default:
					if !errors.Is(err, io.EOF) && q.Context().Err() == nil {
						errCh <- fmt.Errorf("decoding log stream: %w", err)
					}
				}
				return
			}
			if f.IsHeartbeat() {
				continue
			}
			select {
			case frames <- &f:
			case <-cancel:
				return
			}
		}
	}()
	return frames, errCh
}

// rawQuery performs a GET and returns the body unread; the caller closes
// it.
func (c *Client) rawQuery(path string, q *QueryOptions) (io.ReadCloser, error) {
	r := c.newRequest(http.MethodGet, path)
	q.apply(r)
	resp, _, err := c.do(r)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
