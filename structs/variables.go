package structs

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"time"
)

// Variables are small maps of strings kept by the servers at a path in a
// namespace. Their items are sealed with the keyring's active root key
// before they reach Raft (VariableEncrypted); only the endpoints that
// serve them to a token allowed to read them hold them in the clear
// (VariableDecrypted). A variable may carry a lock, which a holder keeps
// alive by renewing it within its TTL.

// MaxVariableSize bounds the sum of the lengths of a variable's keys and
// values.
const MaxVariableSize = 64 * 1024

// Lock timing, as Nomad's.
const (
	DefaultVariableLockTTL = 15 * time.Second
	MinVariableLockTTL     = 10 * time.Second
	MaxVariableLockTTL     = 24 * time.Hour
	// DefaultVariableLockDelay is how long an expired lock keeps the
	// variable locked before anyone may take it again.
	DefaultVariableLockDelay = 15 * time.Second
)

// validVariablePath is Nomad's pattern for variable paths.
var validVariablePath = regexp.MustCompile(`^[a-zA-Z0-9-_~/]{1,128}$`)

// Errors of variables in Nomad's words; the endpoints and the HTTP API
// answer them as they are.
var (
	ErrVariableMissingItems = KindErrorf(ErrInvalid, "variable missing required Items object")
	ErrVariableTooLarge     = KindErrorf(ErrInvalid, "variables are limited to 64KiB in total size")
	ErrVariableLockInSet    = KindErrorf(ErrInvalid, "variable should not contain lock definition")
	ErrVariableLockTTL      = KindErrorf(ErrInvalid, "TTL must be between 10 seconds and 24 hours")
	ErrVariableMissingLock  = KindErrorf(ErrInvalid, "missing lock information")
	ErrVariableReleaseItems = KindErrorf(ErrInvalid, "lock release operation doesn't take variable items")
)

// VariableItems are a variable's keys and values.
type VariableItems map[string]string

// Size is the sum of the lengths of the keys and values.
func (items VariableItems) Size() int {
	n := 0
	for k, v := range items {
		n += len(k) + len(v)
	}
	return n
}

// VariableLock is a lock held on a variable. Its JSON gives the
// durations as Go duration strings ("15s"), as Nomad's API does.
type VariableLock struct {
	// ID is the holder's proof: set by the server when the lock is
	// taken, and presented to renew or release it or to write the
	// variable meanwhile.
	ID string
	// TTL is how long the lock lives without a renewal.
	TTL time.Duration
	// LockDelay is how long an expired lock still keeps others out.
	LockDelay time.Duration
}

// Copy returns a copy of l.
func (l *VariableLock) Copy() *VariableLock {
	if l == nil {
		return nil
	}
	c := *l
	return &c
}

type variableLockJSON struct {
	ID        string
	TTL       string
	LockDelay string
}

// MarshalJSON renders the durations as strings.
func (l VariableLock) MarshalJSON() ([]byte, error) {
	out := variableLockJSON{ID: l.ID}
	if l.TTL != 0 {
		out.TTL = l.TTL.String()
	}
	if l.LockDelay != 0 {
		out.LockDelay = l.LockDelay.String()
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads durations given as strings ("15s"); an empty
// string is zero.
func (l *VariableLock) UnmarshalJSON(b []byte) error {
	var in variableLockJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	out := VariableLock{ID: in.ID}
	for _, d := range []struct {
		name, text string
		into       *time.Duration
	}{{"TTL", in.TTL, &out.TTL}, {"LockDelay", in.LockDelay, &out.LockDelay}} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil {
			return fmt.Errorf("Lock.%s: %w", d.name, err)
		}
		*d.into = v
	}
	*l = out
	return nil
}

// VariableMetadata is what a list shows of a variable: everything but its
// items.
type VariableMetadata struct {
	Namespace string
	Path      string
	// Lock is the lock held on the variable, nil when none is.
	Lock *VariableLock `json:",omitempty"`
	// CreateTime and ModifyTime are Unix nanoseconds.
	CreateIndex uint64
	CreateTime  int64
	ModifyIndex uint64
	ModifyTime  int64
}

// Copy returns a copy of m.
func (m VariableMetadata) Copy() VariableMetadata {
	m.Lock = m.Lock.Copy()
	return m
}

// IsLocked reports whether a lock is held on the variable.
func (m *VariableMetadata) IsLocked() bool { return m.Lock != nil && m.Lock.ID != "" }

// VariableData is a variable's items sealed: the JSON of the items,
// sealed with AES-256-GCM under the root key KeyID (the nonce in front).
type VariableData struct {
	Data  []byte
	KeyID string
}

// VariableEncrypted is a variable as Raft carries it and the state store
// keeps it.
type VariableEncrypted struct {
	VariableMetadata
	VariableData
}

// Copy returns a copy of v; Data is shared, as nothing changes it in
// place.
func (v *VariableEncrypted) Copy() *VariableEncrypted {
	if v == nil {
		return nil
	}
	return &VariableEncrypted{VariableMetadata: v.VariableMetadata.Copy(), VariableData: v.VariableData}
}

// VariableDecrypted is a variable with its items in the clear, as the API
// shows it to a token that may read it.
type VariableDecrypted struct {
	VariableMetadata
	Items VariableItems
}

// Copy returns a deep copy of v.
func (v *VariableDecrypted) Copy() *VariableDecrypted {
	if v == nil {
		return nil
	}
	return &VariableDecrypted{VariableMetadata: v.VariableMetadata.Copy(), Items: maps.Clone(v.Items)}
}

// ValidateVariablePath checks a path as Nomad does: its characters and
// length, and the paths under "nomad/" that Nomad reserves for itself
// (only nomad/jobs and below, nomad/sentinel and below, and one level
// below nomad/job-templates may be written).
func ValidateVariablePath(path string) error {
	if !validVariablePath.MatchString(path) {
		return KindErrorf(ErrInvalid, "invalid path %q", path)
	}
	parts := strings.Split(path, "/")
	if parts[0] != "nomad" {
		return nil
	}
	switch {
	case len(parts) >= 2 && (parts[1] == "jobs" || parts[1] == "sentinel"):
		return nil
	case len(parts) == 3 && parts[1] == "job-templates" && parts[2] != "":
		return nil
	}
	return KindErrorf(ErrInvalid, "invalid path %q: only paths at \"nomad/jobs\", \"nomad/sentinel\" "+
		"and below, or one level below \"nomad/job-templates\", are valid paths under \"nomad/\"", path)
}

// Validate checks a variable to be written: its path, its items and
// their size.
func (v *VariableDecrypted) Validate() error {
	if err := ValidateVariablePath(v.Path); err != nil {
		return err
	}
	if len(v.Items) == 0 {
		return ErrVariableMissingItems
	}
	if v.Items.Size() > MaxVariableSize {
		return ErrVariableTooLarge
	}
	return nil
}

// CanonicalizeLock fills a lock request's defaults and checks its TTL.
func (l *VariableLock) CanonicalizeLock() error {
	if l.TTL == 0 {
		l.TTL = DefaultVariableLockTTL
	}
	if l.LockDelay == 0 {
		l.LockDelay = DefaultVariableLockDelay
	}
	if l.TTL < MinVariableLockTTL || l.TTL > MaxVariableLockTTL {
		return ErrVariableLockTTL
	}
	return nil
}
