package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// ErrVariableNotFound is the text of the error a read of a missing
// variable answered with in older clients.
//
// Deprecated: use ErrVariablePathNotFound.
const ErrVariableNotFound = "variable not found"

// ErrVariablePathNotFound is returned by Read and GetVariableItems when
// no variable is at the path.
var ErrVariablePathNotFound = errors.New("variable not found")

// VariableItems are a variable's keys and values.
type VariableItems map[string]string

// VariableLock is the lock held on a variable. TTL and LockDelay are Go
// duration strings ("15s").
type VariableLock struct {
	// ID is set by the server when the lock is taken; the holder shows
	// it to renew or release the lock, or to write the variable.
	ID        string
	TTL       string
	LockDelay string
}

// Variable is a variable with its items; its JSON is Nomad's.
type Variable struct {
	Namespace   string `hcl:"namespace"`
	Path        string `hcl:"path"`
	CreateIndex uint64 `hcl:"create_index"`
	ModifyIndex uint64 `hcl:"modify_index"`
	// CreateTime and ModifyTime are Unix nanoseconds.
	CreateTime int64         `hcl:"create_time"`
	ModifyTime int64         `hcl:"modify_time"`
	Items      VariableItems `hcl:"items"`
	Lock       *VariableLock `hcl:",lock,optional" json:",omitempty"`
}

// VariableMetadata is a variable without its items, as lists show it.
type VariableMetadata struct {
	Namespace   string        `hcl:"namespace"`
	Path        string        `hcl:"path"`
	CreateIndex uint64        `hcl:"create_index"`
	ModifyIndex uint64        `hcl:"modify_index"`
	CreateTime  int64         `hcl:"create_time"`
	ModifyTime  int64         `hcl:"modify_time"`
	Lock        *VariableLock `hcl:",lock,optional" json:",omitempty"`
}

// NewVariable returns an empty variable at path, ready for items.
func NewVariable(path string) *Variable {
	return &Variable{Path: path, Items: VariableItems{}}
}

// Copy returns a copy of v with its own items.
func (v *Variable) Copy() *Variable {
	out := *v
	out.Items = make(VariableItems, len(v.Items))
	for k, val := range v.Items {
		out.Items[k] = val
	}
	if v.Lock != nil {
		l := *v.Lock
		out.Lock = &l
	}
	return &out
}

// Metadata is v without its items, to compare with a list's entries.
func (v *Variable) Metadata() *VariableMetadata {
	return &VariableMetadata{
		Namespace: v.Namespace, Path: v.Path,
		CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex,
		CreateTime: v.CreateTime, ModifyTime: v.ModifyTime,
		Lock: v.Lock,
	}
}

// IsZeroValue reports whether v is as NewVariable("") or new(Variable)
// left it: no metadata and no items.
func (v *Variable) IsZeroValue() bool {
	return *v.Metadata() == VariableMetadata{} && v.Items == nil
}

// AsJSON renders v as JSON.
func (v *Variable) AsJSON() string {
	b, _ := json.Marshal(v)
	return string(b)
}

// AsPrettyJSON renders v as indented JSON.
func (v *Variable) AsPrettyJSON() string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// ErrCASConflict is a write refused because the variable's ModifyIndex
// was not CheckIndex; Conflict is what is there.
type ErrCASConflict struct {
	CheckIndex uint64
	Conflict   *Variable
}

func (e ErrCASConflict) Error() string {
	return fmt.Sprintf("cas conflict: expected ModifyIndex %v; found %v", e.CheckIndex, e.Conflict.ModifyIndex)
}

// Variables is the /v1/var endpoint group.
type Variables struct {
	client *Client
}

// Variables returns the variables endpoint group.
func (c *Client) Variables() *Variables { return &Variables{client: c} }

// cleanPath drops the leading and trailing slashes (and spaces) that
// would make the HTTP router redirect the request.
func cleanPath(path string) string { return strings.Trim(path, " /") }

func varPath(path string) string { return "/v1/var/" + cleanPath(path) }

// Create writes v, whatever is there.
func (vs *Variables) Create(v *Variable, q *WriteOptions) (*Variable, *WriteMeta, error) {
	v.Path = cleanPath(v.Path)
	var out Variable
	wm, err := vs.client.write(http.MethodPut, varPath(v.Path), v, &out, q)
	if err != nil {
		return nil, wm, err
	}
	return &out, wm, nil
}

// CheckedCreate writes v only if no variable is at its path; otherwise
// the error is an ErrCASConflict.
func (vs *Variables) CheckedCreate(v *Variable, q *WriteOptions) (*Variable, *WriteMeta, error) {
	v.Path = cleanPath(v.Path)
	return vs.writeChecked(varPath(v.Path)+"?cas=0", v, 0, q)
}

// Read returns the variable at path; ErrVariablePathNotFound when there
// is none.
func (vs *Variables) Read(path string, q *QueryOptions) (*Variable, *QueryMeta, error) {
	v, qm, err := vs.readInternal(path, q)
	if err != nil {
		return nil, nil, err
	}
	if v == nil {
		return nil, qm, ErrVariablePathNotFound
	}
	return v, qm, nil
}

// Peek returns the variable at path, nil (and no error) when there is
// none or the token may not read it.
func (vs *Variables) Peek(path string, q *QueryOptions) (*Variable, *QueryMeta, error) {
	return vs.readInternal(path, q)
}

// Update writes v, whatever is there.
func (vs *Variables) Update(v *Variable, q *WriteOptions) (*Variable, *WriteMeta, error) {
	return vs.Create(v, q)
}

// CheckedUpdate writes v only if the stored ModifyIndex is v's;
// otherwise the error is an ErrCASConflict.
func (vs *Variables) CheckedUpdate(v *Variable, q *WriteOptions) (*Variable, *WriteMeta, error) {
	v.Path = cleanPath(v.Path)
	return vs.writeChecked(fmt.Sprintf("%s?cas=%d", varPath(v.Path), v.ModifyIndex), v, v.ModifyIndex, q)
}

// Delete removes the variable at path; nothing there is no error.
func (vs *Variables) Delete(path string, q *WriteOptions) (*WriteMeta, error) {
	return vs.client.write(http.MethodDelete, varPath(path), nil, nil, q)
}

// CheckedDelete removes the variable at path only if its ModifyIndex is
// checkIndex; otherwise the error is an ErrCASConflict.
func (vs *Variables) CheckedDelete(path string, checkIndex uint64, q *WriteOptions) (*WriteMeta, error) {
	wm, err := vs.client.write(http.MethodDelete, fmt.Sprintf("%s?cas=%d", varPath(path), checkIndex), nil, nil, q)
	if err != nil {
		return nil, asCASConflict(err, checkIndex)
	}
	return wm, nil
}

// List returns the metadata of the variables the token may list; the
// options may carry a Prefix.
func (vs *Variables) List(q *QueryOptions) ([]*VariableMetadata, *QueryMeta, error) {
	var out []*VariableMetadata
	qm, err := vs.client.query("/v1/vars", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// PrefixList is List of the paths that start with prefix.
func (vs *Variables) PrefixList(prefix string, q *QueryOptions) ([]*VariableMetadata, *QueryMeta, error) {
	if q == nil {
		q = &QueryOptions{}
	}
	q.Prefix = prefix
	return vs.List(q)
}

// GetItems returns the items of the variable at path.
//
// Deprecated: use GetVariableItems.
func (vs *Variables) GetItems(path string, q *QueryOptions) (*VariableItems, *QueryMeta, error) {
	items, qm, err := vs.GetVariableItems(path, q)
	if err != nil {
		return nil, nil, err
	}
	return &items, qm, nil
}

// GetVariableItems returns the items of the variable at path;
// ErrVariablePathNotFound when there is none.
func (vs *Variables) GetVariableItems(path string, q *QueryOptions) (VariableItems, *QueryMeta, error) {
	v, qm, err := vs.Read(path, q)
	if err != nil {
		return nil, nil, err
	}
	return v.Items, qm, nil
}

// AcquireLock takes the lock of v's path, writing v's items; v.Lock may
// ask for a TTL and LockDelay. The answer's Lock.ID is the holder's.
func (vs *Variables) AcquireLock(v *Variable, q *WriteOptions) (*Variable, *WriteMeta, error) {
	return vs.lockOperation(v, q, "lock-acquire")
}

// RenewLock restarts the TTL of the lock v.Lock.ID names.
func (vs *Variables) RenewLock(v *Variable, q *WriteOptions) (*VariableMetadata, *WriteMeta, error) {
	v.Path = cleanPath(v.Path)
	var out VariableMetadata
	wm, err := vs.client.write(http.MethodPut, varPath(v.Path)+"?lock-renew", v, &out, q)
	if err != nil {
		return nil, wm, err
	}
	return &out, wm, nil
}

// ReleaseLock drops the lock v.Lock.ID names, keeping the items; v must
// carry no items.
func (vs *Variables) ReleaseLock(v *Variable, q *WriteOptions) (*Variable, *WriteMeta, error) {
	return vs.lockOperation(v, q, "lock-release")
}

func (vs *Variables) lockOperation(v *Variable, q *WriteOptions, op string) (*Variable, *WriteMeta, error) {
	v.Path = cleanPath(v.Path)
	var out Variable
	wm, err := vs.client.write(http.MethodPut, varPath(v.Path)+"?"+op, v, &out, q)
	if err != nil {
		return nil, wm, err
	}
	return &out, wm, nil
}

// readInternal reads the variable at path: nil, with no error, when
// there is none (404) or the token may not read it (403). On a 403 the
// meta says index 1 and a known leader, as consumers that poll with
// Peek expect a non-zero index.
func (vs *Variables) readInternal(path string, q *QueryOptions) (*Variable, *QueryMeta, error) {
	var out Variable
	qm, err := vs.client.query(varPath(path), &out, q)
	if code, ok := StatusCodeOf(err); ok {
		switch code {
		case http.StatusNotFound:
			return nil, &QueryMeta{}, nil
		case http.StatusForbidden:
			return nil, &QueryMeta{LastIndex: 1, KnownLeader: true}, nil
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// writeChecked is a check-and-set write: a 409 becomes ErrCASConflict.
func (vs *Variables) writeChecked(path string, v *Variable, checkIndex uint64, q *WriteOptions) (*Variable, *WriteMeta, error) {
	var out Variable
	wm, err := vs.client.write(http.MethodPut, path, v, &out, q)
	if err != nil {
		return nil, nil, asCASConflict(err, checkIndex)
	}
	return &out, wm, nil
}

// asCASConflict turns a 409 answer, whose body is the variable there,
// into an ErrCASConflict; other errors pass unchanged.
func asCASConflict(err error, checkIndex uint64) error {
	var ure *UnexpectedResponseError
	if !errors.As(err, &ure) || ure.StatusCode != http.StatusConflict {
		return err
	}
	var conflict Variable
	if jerr := json.Unmarshal([]byte(ure.Body), &conflict); jerr != nil {
		return err
	}
	return ErrCASConflict{CheckIndex: checkIndex, Conflict: &conflict}
}
