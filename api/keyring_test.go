package api

import (
	"net/url"
	"testing"
)

func TestKeyringEndpoints(t *testing.T) {
	keyID := "9c5e1b7a-3f2d-4e8a-b1c6-7d0f2a4e9b13"
	meta := `{"KeyID":"` + keyID + `","Algorithm":"aes256-gcm","CreateTime":1714557000000000000,` +
		`"CreateIndex":12,"ModifyIndex":12,"State":"active","PublishTime":0}`
	runEndpointCases(t, []endpointCase{
		{
			name:     "list",
			reply:    reply{Body: "[" + meta + "]"},
			call:     func(c *Client) (any, error) { r, _, err := c.Keyring().List(nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/operator/keyring/keys",
			check: func(t *testing.T, out any) {
				keys := out.([]*RootKeyMeta)
				if len(keys) != 1 || keys[0].KeyID != keyID || keys[0].State != RootKeyStateActive ||
					keys[0].Algorithm != EncryptionAlgorithmAES256GCM || keys[0].CreateTime != 1714557000000000000 {
					t.Fatalf("keys = %+v", keys)
				}
			},
		},
		{
			name:     "rotate",
			reply:    reply{Body: `{"Key":` + meta + `,"Index":12}`},
			call:     func(c *Client) (any, error) { r, _, err := c.Keyring().Rotate(nil, nil); return r, err },
			wantMeth: "PUT", wantPath: "/v1/operator/keyring/rotate",
			check: func(t *testing.T, out any) {
				if k := out.(*RootKeyMeta); k.KeyID != keyID || k.CreateIndex != 12 {
					t.Fatalf("key = %+v", k)
				}
			},
		},
		{
			name:  "rotate with every option",
			reply: reply{Body: `{"Key":` + meta + `,"Index":12}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Keyring().Rotate(&KeyringRotateOptions{
					Full: true, Algorithm: EncryptionAlgorithmAES256GCM, PublishTime: 1714557000000000000,
				}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/operator/keyring/rotate",
			wantQuery: url.Values{"algo": {"aes256-gcm"}, "full": {"true"}, "publish_time": {"1714557000000000000"}},
		},
		{
			name:  "delete",
			reply: reply{Body: `{"Index":14}`},
			call: func(c *Client) (any, error) {
				return c.Keyring().Delete(&KeyringDeleteOptions{KeyID: keyID}, nil)
			},
			wantMeth: "DELETE", wantPath: "/v1/operator/keyring/key/" + keyID,
			wantQuery: url.Values{"force": {"false"}},
		},
		{
			name:  "force delete",
			reply: reply{Body: `{"Index":14}`},
			call: func(c *Client) (any, error) {
				return c.Keyring().Delete(&KeyringDeleteOptions{KeyID: keyID, Force: true}, nil)
			},
			wantMeth: "DELETE", wantPath: "/v1/operator/keyring/key/" + keyID,
			wantQuery: url.Values{"force": {"true"}},
		},
	})
}

// An error answer reaches the caller with its status and text.
func TestKeyring_DeleteError(t *testing.T) {
	agent := newFakeAgent(t, reply{Status: 400, Body: "active root key cannot be deleted - call rotate first"})
	_, err := agent.client(t).Keyring().Delete(&KeyringDeleteOptions{KeyID: "k"}, nil)
	if err == nil {
		t.Fatal("no error")
	}
	if code, ok := StatusCodeOf(err); !ok || code != 400 {
		t.Fatalf("error = %v", err)
	}
	if err.Error() != "Unexpected response code: 400 (active root key cannot be deleted - call rotate first)" {
		t.Fatalf("error = %v", err)
	}
}
