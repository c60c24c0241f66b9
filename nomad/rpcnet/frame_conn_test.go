package rpcnet

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"

	"github.com/shoenig/test/must"
)

// writesConn records each Write it is given.
type writesConn struct {
	net.Conn
	writes [][]byte
}

func (w *writesConn) Write(p []byte) (int, error) {
	w.writes = append(w.writes, bytes.Clone(p))
	return len(p), nil
}

// header is a yamux frame header of type typ with length n.
func header(typ byte, n uint32) []byte {
	h := make([]byte, yamuxHeaderSize)
	h[1] = typ
	binary.BigEndian.PutUint32(h[4:8], 7) // stream ID
	binary.BigEndian.PutUint32(h[8:12], n)
	return h
}

func TestFrameConn_Writes(t *testing.T) {
	const windowUpdate, ping = 1, 2
	body5 := []byte("hello")
	cases := []struct {
		name   string
		writes [][]byte
		// want is the writes the connection gets.
		want [][]byte
	}{
		{
			name:   "a data frame's header and body go in one write",
			writes: [][]byte{header(yamuxTypeData, 5), body5},
			want:   [][]byte{append(header(yamuxTypeData, 5), body5...)},
		},
		{
			name:   "a window update has no body: written at once",
			writes: [][]byte{header(windowUpdate, 1<<18)},
			want:   [][]byte{header(windowUpdate, 1<<18)},
		},
		{
			name:   "a ping's length is not a body",
			writes: [][]byte{header(ping, 5), header(ping, 6)},
			want:   [][]byte{header(ping, 5), header(ping, 6)},
		},
		{
			name:   "a data frame without a body (a FIN) is written at once",
			writes: [][]byte{header(yamuxTypeData, 0)},
			want:   [][]byte{header(yamuxTypeData, 0)},
		},
		{
			name:   "a held header is sent first when the next write is not its body",
			writes: [][]byte{header(yamuxTypeData, 5), []byte("abc")},
			want:   [][]byte{header(yamuxTypeData, 5), []byte("abc")},
		},
		{
			name:   "a write holding more than a header passes through",
			writes: [][]byte{append(header(yamuxTypeData, 5), body5...)},
			want:   [][]byte{append(header(yamuxTypeData, 5), body5...)},
		},
		{
			name: "frames in a row",
			writes: [][]byte{
				header(yamuxTypeData, 5), body5,
				header(windowUpdate, 9),
				header(yamuxTypeData, 3), []byte("xyz"),
			},
			want: [][]byte{
				append(header(yamuxTypeData, 5), body5...),
				header(windowUpdate, 9),
				append(header(yamuxTypeData, 3), []byte("xyz")...),
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &writesConn{}
			c := newFrameConn(rec)
			for _, w := range tc.writes {
				n, err := c.Write(w)
				must.NoError(t, err)
				must.Eq(t, len(w), n)
			}
			must.Eq(t, tc.want, rec.writes)
		})
	}
}
