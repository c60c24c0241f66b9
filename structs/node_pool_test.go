package structs

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNodePool_Validate(t *testing.T) {
	on := true
	cases := []struct {
		name string
		pool *NodePool
		want string // "" valid
	}{
		{"built-in all", BuiltInNodePools()[0], ""},
		{"built-in default", BuiltInNodePools()[1], ""},
		{"dashes underscores digits", &NodePool{Name: "gpu_big-1"}, ""},
		{"wildcard", &NodePool{Name: "*"}, `invalid name "*", must match regex ^[a-zA-Z0-9-_]{1,128}$`},
		{"slash", &NodePool{Name: "node/pool"}, "invalid name"},
		{"empty", &NodePool{}, `invalid name ""`},
		{"too long", &NodePool{Name: strings.Repeat("a", 129)}, "invalid name"},
		{"description", &NodePool{Name: "a", Description: strings.Repeat("d", 257)}, "description longer than 256"},
		{"negative ttl", &NodePool{Name: "a", NodeIdentityTTL: -time.Second}, "node identity TTL -1s must not be negative"},
		{"scheduler configuration", &NodePool{Name: "a",
			SchedulerConfiguration: &NodePoolSchedulerConfiguration{MemoryOversubscriptionEnabled: &on}},
			`Feature "Node Pools Governance" is unlicensed`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.pool.Validate()
			if c.want == "" {
				if err != nil {
					t.Fatalf("invalid: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("error = %v, want %q of kind ErrInvalid", err, c.want)
			}
		})
	}
}

func TestNodePool_HashAndCopy(t *testing.T) {
	a := &NodePool{Name: "a", Meta: map[string]string{"x": "1"}}
	h := string(a.SetHash())
	c := a.Copy()
	c.Meta["x"] = "changed"
	if a.Meta["x"] != "1" {
		t.Fatal("the copy shares its meta")
	}
	if string(c.SetHash()) == h {
		t.Fatal("the hash ignores meta")
	}
	if string(a.Copy().SetHash()) != h {
		t.Fatal("the hash is not stable")
	}
}

// TestNodePool_JSON: the TTL goes out as nanoseconds and comes in as
// either nanoseconds or a duration string, as Nomad's does.
func TestNodePool_JSON(t *testing.T) {
	out, err := json.Marshal(&NodePool{Name: "a", NodeIdentityTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"NodeIdentityTTL":3600000000000`) {
		t.Fatalf("marshalled %s", out)
	}
	cases := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{`{"Name":"a","NodeIdentityTTL":"720h0m0s"}`, 720 * time.Hour, false},
		{`{"Name":"a","NodeIdentityTTL":3600000000000}`, time.Hour, false},
		{`{"Name":"a","NodeIdentityTTL":""}`, 0, false},
		{`{"Name":"a"}`, 0, false},
		{`{"Name":"a","NodeIdentityTTL":"soon"}`, 0, true},
		{`{"Name":"a","NodeIdentityTTL":true}`, 0, true},
	}
	for _, c := range cases {
		var p NodePool
		err := json.Unmarshal([]byte(c.in), &p)
		if c.err {
			if err == nil {
				t.Errorf("%s: no error", c.in)
			}
			continue
		}
		if err != nil || p.NodeIdentityTTL != c.want || p.Name != "a" {
			t.Errorf("%s: %+v, %v", c.in, p, err)
		}
	}
}

func TestBuiltInNodePools(t *testing.T) {
	pools := BuiltInNodePools()
	if len(pools) != 2 || pools[0].Name != "all" || pools[1].Name != "default" ||
		pools[0].Description != "Node pool with all nodes in the cluster." ||
		pools[1].Description != "Default node pool." || pools[1].NodeIdentityTTL != 24*time.Hour {
		t.Fatalf("built-ins: %+v %+v", pools[0], pools[1])
	}
	if !IsBuiltInNodePool("all") || !IsBuiltInNodePool("default") || IsBuiltInNodePool("gpu") {
		t.Fatal("IsBuiltInNodePool")
	}
}
