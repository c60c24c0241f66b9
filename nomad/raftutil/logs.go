package raftutil

import (
	"fmt"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/structs"
)

// Entry is one log entry, decoded for reading.
type Entry struct {
	Index uint64
	Term  uint64
	// Type is Raft's kind of entry (LogCommand, LogConfiguration, ...).
	Type string
	// MessageType names a command's request ("JobRegister"); empty for
	// Raft's own entries.
	MessageType string `json:",omitempty"`
	// Body is a command's request as generic maps, or the decode error.
	Body interface{} `json:",omitempty"`
}

// Entries calls fn with each log entry from the first up to lastIndex (0:
// the last), in order, and stops at fn's first error.
func (s *Store) Entries(lastIndex uint64, fn func(*raft.Log, *Entry) error) error {
	first, err := s.Logs.FirstIndex()
	if err != nil {
		return err
	}
	last, err := s.Logs.LastIndex()
	if err != nil {
		return err
	}
	if lastIndex != 0 && lastIndex < last {
		last = lastIndex
	}
	for i := first; i != 0 && i <= last; i++ {
		var l raft.Log
		if err := s.Logs.GetLog(i, &l); err != nil {
			return fmt.Errorf("reading log entry %d: %w", i, err)
		}
		if err := fn(&l, decodeEntry(&l)); err != nil {
			return err
		}
	}
	return nil
}

// decodeEntry decodes a command's body into generic maps; any entry can
// be shown, whatever its type.
func decodeEntry(l *raft.Log) *Entry {
	e := &Entry{Index: l.Index, Term: l.Term, Type: l.Type.String()}
	if l.Type != raft.LogCommand || len(l.Data) == 0 {
		return e
	}
	t := structs.MessageType(l.Data[0])
	e.MessageType = t.String()
	var body interface{}
	if err := codec.NewDecoderBytes(l.Data[1:], structs.MsgpackHandle).Decode(&body); err != nil {
		e.Body = map[string]string{"DecodeError": err.Error()}
		return e
	}
	e.Body = body
	return e
}
