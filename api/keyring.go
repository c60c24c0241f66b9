package api

import (
	"net/http"
	"net/url"
	"strconv"
)

// EncryptionAlgorithm is the algorithm of a root key's data key.
type EncryptionAlgorithm string

// EncryptionAlgorithmAES256GCM is the only algorithm of root keys.
const EncryptionAlgorithmAES256GCM EncryptionAlgorithm = "aes256-gcm"

// RootKeyState is where a root key is in its life.
type RootKeyState string

// Root key states.
const (
	RootKeyStateInactive     RootKeyState = "inactive"
	RootKeyStateActive       RootKeyState = "active"
	RootKeyStateRekeying     RootKeyState = "rekeying"
	RootKeyStateDeprecated   RootKeyState = "deprecated"
	RootKeyStatePrepublished RootKeyState = "prepublished"
)

// RootKeyMeta describes a root key; the key material never leaves the
// servers.
type RootKeyMeta struct {
	KeyID     string
	Algorithm EncryptionAlgorithm
	// CreateTime and PublishTime are Unix nanoseconds.
	CreateTime  int64
	CreateIndex uint64
	ModifyIndex uint64
	State       RootKeyState
	PublishTime int64
}

// Keyring is the /v1/operator/keyring endpoint group: the cluster's root
// keys.
type Keyring struct {
	client *Client
}

// Keyring returns the keyring endpoint group.
func (c *Client) Keyring() *Keyring { return &Keyring{client: c} }

// List returns every root key's metadata.
func (k *Keyring) List(q *QueryOptions) ([]*RootKeyMeta, *QueryMeta, error) {
	var resp []*RootKeyMeta
	qm, err := k.client.query("/v1/operator/keyring/keys", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// KeyringRotateOptions are the parameters of Rotate.
type KeyringRotateOptions struct {
	// Full marks every older key for rekeying.
	Full      bool
	Algorithm EncryptionAlgorithm
	// PublishTime, Unix nanoseconds, prepublishes the new key: it is
	// published at once and becomes active at that time.
	PublishTime int64
}

// Rotate makes a new root key and returns its metadata.
func (k *Keyring) Rotate(opts *KeyringRotateOptions, w *WriteOptions) (*RootKeyMeta, *WriteMeta, error) {
	params := url.Values{}
	if opts != nil {
		if opts.Algorithm != "" {
			params.Set("algo", string(opts.Algorithm))
		}
		if opts.Full {
			params.Set("full", "true")
		}
		if opts.PublishTime > 0 {
			params.Set("publish_time", strconv.FormatInt(opts.PublishTime, 10))
		}
	}
	path := "/v1/operator/keyring/rotate"
	if q := params.Encode(); q != "" {
		path += "?" + q
	}
	var resp struct{ Key *RootKeyMeta }
	wm, err := k.client.write(http.MethodPut, path, nil, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return resp.Key, wm, nil
}

// KeyringDeleteOptions are the parameters of Delete.
type KeyringDeleteOptions struct {
	KeyID string
	// Force removes a key that is still in use.
	Force bool
}

// Delete removes a root key that is not the active one.
func (k *Keyring) Delete(opts *KeyringDeleteOptions, w *WriteOptions) (*WriteMeta, error) {
	path := "/v1/operator/keyring/key/" + escape(opts.KeyID) + "?force=" + strconv.FormatBool(opts.Force)
	return k.client.write(http.MethodDelete, path, nil, nil, w)
}
