package api

import "net/http"

// KeyringResponse answers every gossip keyring operation: the servers'
// messages by member name, the installed keys (base64) with how many
// servers hold each (filled by ListKeys), and the number of servers
// asked.
type KeyringResponse struct {
	Messages map[string]string
	Keys     map[string]int
	NumNodes int
}

// KeyringRequest names the gossip key an operation acts on.
type KeyringRequest struct {
	Key string
}

// ListKeys lists the gossip encryption keys installed on the servers.
func (a *Agent) ListKeys() (*KeyringResponse, error) {
	var out KeyringResponse
	if _, err := a.client.query("/v1/agent/keyring/list", &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// InstallKey adds a gossip encryption key (base64) to every server's
// keyring; the servers keep encrypting with their primary key.
func (a *Agent) InstallKey(key string) (*KeyringResponse, error) {
	return a.keyringOp("install", key)
}

// UseKey makes an installed gossip key the one every server encrypts
// with.
func (a *Agent) UseKey(key string) (*KeyringResponse, error) {
	return a.keyringOp("use", key)
}

// RemoveKey removes a gossip key, other than the primary one, from every
// server's keyring.
func (a *Agent) RemoveKey(key string) (*KeyringResponse, error) {
	return a.keyringOp("remove", key)
}

func (a *Agent) keyringOp(op, key string) (*KeyringResponse, error) {
	var out KeyringResponse
	_, err := a.client.write(http.MethodPut, "/v1/agent/keyring/"+op, &KeyringRequest{Key: key}, &out, nil)
	return &out, err
}
