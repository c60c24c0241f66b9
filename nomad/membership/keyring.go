package membership

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/serf/serf"

	"github.com/opennomad/nomad/structs"
)

// ErrNotEncrypted is the answer of the key operations on a server whose
// gossip is not encrypted: there is no keyring to change, and installing
// a key cannot turn encryption on (every member would have to restart).
var ErrNotEncrypted = errors.New("gossip encryption is not enabled on this server: start the servers with server.encrypt to use the gossip keyring")

// KeyringResponse is what the members answered to a key operation.
type KeyringResponse struct {
	// Messages are the members' messages (errors, warnings), by member
	// name.
	Messages map[string]string
	// Keys counts, for each installed key (base64), the members holding
	// it; filled by ListKeys.
	Keys map[string]int
	// PrimaryKeys counts the members using each key to encrypt; filled
	// by ListKeys.
	PrimaryKeys map[string]int
	// NumNodes is the number of members asked, NumResp of those that
	// answered and NumErr of those that failed.
	NumNodes int
	NumResp  int
	NumErr   int
}

// ListKeys asks every member which keys it holds.
func (m *Membership) ListKeys() (*KeyringResponse, error) {
	return m.keyOp("", false, func(km *serf.KeyManager) (*serf.KeyResponse, error) { return km.ListKeys() })
}

// InstallKey adds key (base64) to every member's keyring: they accept
// messages sealed with it, and keep sealing with their primary key.
func (m *Membership) InstallKey(key string) (*KeyringResponse, error) {
	return m.keyOp(key, true, func(km *serf.KeyManager) (*serf.KeyResponse, error) { return km.InstallKey(key) })
}

// UseKey makes key, which every member must already hold, the key every
// member seals its messages with.
func (m *Membership) UseKey(key string) (*KeyringResponse, error) {
	return m.keyOp(key, true, func(km *serf.KeyManager) (*serf.KeyResponse, error) { return km.UseKey(key) })
}

// RemoveKey removes key from every member's keyring; the primary key
// cannot be removed.
func (m *Membership) RemoveKey(key string) (*KeyringResponse, error) {
	return m.keyOp(key, true, func(km *serf.KeyManager) (*serf.KeyResponse, error) { return km.RemoveKey(key) })
}

// keyOp runs a key operation across the members. key, when the operation
// takes one (withKey), is checked first so that a malformed key is a bad
// request rather than every member's failure.
func (m *Membership) keyOp(key string, withKey bool, op func(*serf.KeyManager) (*serf.KeyResponse, error)) (*KeyringResponse, error) {
	if !m.serf.EncryptionEnabled() {
		return nil, structs.WithKind(structs.ErrInvalid, ErrNotEncrypted)
	}
	if withKey {
		if key == "" {
			return nil, structs.KindErrorf(structs.ErrInvalid, "missing gossip key (Key)")
		}
		if _, err := ParseKey(key); err != nil {
			return nil, structs.KindErrorf(structs.ErrInvalid, "invalid gossip key: %w", err)
		}
	}
	resp, err := op(m.serf.KeyManager())
	out := &KeyringResponse{}
	if resp != nil {
		out = &KeyringResponse{
			Messages: resp.Messages, Keys: resp.Keys, PrimaryKeys: resp.PrimaryKeys,
			NumNodes: resp.NumNodes, NumResp: resp.NumResp, NumErr: resp.NumErr,
		}
	}
	if err != nil {
		// Serf's error only counts the failures; say which members
		// failed and why.
		return out, fmt.Errorf("%w%s", err, describeMessages(out.Messages))
	}
	return out, nil
}

// describeMessages renders the members' messages as ": a: msg; b: msg",
// sorted by member, or "" when there are none.
func describeMessages(msgs map[string]string) string {
	if len(msgs) == 0 {
		return ""
	}
	names := make([]string, 0, len(msgs))
	for name := range msgs {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = name + ": " + msgs[name]
	}
	return ": " + strings.Join(parts, "; ")
}
