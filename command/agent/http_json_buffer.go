package agent

import (
	"bytes"
	"sync"
)

// An API answer is rendered into a pooled buffer and written from it: a
// new buffer per answer was grown by doubling to the answer's size and
// dropped as soon as it was written.

// maxPooledJSON is the largest buffer kept for reuse; the rare answer
// larger than this (a long list) does not pin its memory in the pool.
const maxPooledJSON = 256 << 10

var jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getJSONBuffer() *bytes.Buffer {
	buf := jsonBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	return buf
}

// putJSONBuffer returns buf to the pool once nothing refers to its bytes.
func putJSONBuffer(buf *bytes.Buffer) {
	if buf.Cap() > maxPooledJSON {
		return
	}
	jsonBuffers.Put(buf)
}
