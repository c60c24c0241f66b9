package client

import (
	"errors"
	"testing"

	"github.com/shoenig/test/must"
)

func strp(s string) *string { return &s }

func TestClient_NodeMetaAppliedPersistedAndPushed(t *testing.T) {
	srv := testServer(t, nil)
	cfg := testClientConfig(t, local(srv))
	cfg.Meta = map[string]string{"rack": "r1", "zone": "z1"}
	c1, err := NewClient(cfg)
	must.NoError(t, err)
	id := c1.NodeID()

	before := c1.NodeMeta()
	must.Eq(t, before.Static, before.Meta)
	must.MapEmpty(t, before.Dynamic)

	got, err := c1.ApplyNodeMeta(map[string]*string{"color": strp("blue"), "zone": nil, "rack": strp("r2")})
	must.NoError(t, err)
	must.Eq(t, withDefaultNodeMeta(map[string]string{"rack": "r2", "color": "blue"}), got.Meta)
	must.Eq(t, withDefaultNodeMeta(map[string]string{"rack": "r1", "zone": "z1"}), got.Static)
	must.MapLen(t, 3, got.Dynamic)
	must.Nil(t, got.Dynamic["zone"])

	// The servers see the new meta without waiting for a driver change.
	eventually(t, "meta at the servers", func() bool {
		n, err := srv.State().NodeByID(nil, id)
		return err == nil && n != nil && n.Meta["color"] == "blue" && n.Meta["zone"] == ""
	})

	// A restarted client keeps what was applied.
	must.NoError(t, c1.Shutdown())
	c2 := testClient(t, cfg)
	again := c2.NodeMeta()
	must.Eq(t, got.Meta, again.Meta)
	must.Eq(t, got.Meta, c2.Node().Meta)
}

// TestClient_DefaultNodeMeta: a node registers Nomad's connect.*
// defaults as static metadata, under what the configuration sets; they
// can be removed at run time as any static key.
func TestClient_DefaultNodeMeta(t *testing.T) {
	srv := testServer(t, nil)
	cfg := testClientConfig(t, local(srv))
	cfg.Meta = map[string]string{"connect.log_level": "debug"}
	c := testClient(t, cfg)

	meta := c.NodeMeta()
	must.Eq(t, meta.Static, meta.Meta)
	must.MapLen(t, len(defaultNodeMeta), meta.Static)
	must.Eq(t, "debug", meta.Static["connect.log_level"], must.Sprint("the configuration wins"))
	must.Eq(t, "1", meta.Static["connect.proxy_concurrency"])
	must.Eq(t, "docker.io/envoyproxy/envoy:v${NOMAD_envoy_version}", meta.Static["connect.sidecar_image"])
	must.Eq(t, map[string]string{"connect.log_level": "debug"}, cfg.Meta, must.Sprint("the caller's map is left alone"))

	got, err := c.ApplyNodeMeta(map[string]*string{"connect.sidecar_image": nil})
	must.NoError(t, err)
	must.MapNotContainsKey(t, got.Meta, "connect.sidecar_image")
	must.MapContainsKey(t, got.Static, "connect.sidecar_image")
	eventually(t, "defaults at the servers", func() bool {
		n, err := srv.State().NodeByID(nil, c.NodeID())
		return err == nil && n != nil && n.Meta["connect.transparent_proxy.default_uid"] == "101" &&
			n.Meta["connect.sidecar_image"] == ""
	})
}

func TestClient_NodeMetaRefusesBadKeys(t *testing.T) {
	srv := testServer(t, nil)
	c := testClient(t, testClientConfig(t, local(srv)))
	cases := []struct {
		key  string
		want string
	}{
		{"", "metadata keys must not be empty"},
		{"a..b", `"a..b" is invalid; metadata keys must be valid dotted hcl identifiers`},
		{"1abc", `"1abc" is invalid`},
		{"has space", `"has space" is invalid`},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			_, err := c.ApplyNodeMeta(map[string]*string{tc.key: strp("x"), "fine.key-1": strp("y")})
			must.ErrorContains(t, err, tc.want)
			must.True(t, errors.Is(err, ErrInvalid))
			_, kept := c.NodeMeta().Meta["fine.key-1"]
			must.False(t, kept, must.Sprint("a refused apply changes nothing"))
		})
	}
}
