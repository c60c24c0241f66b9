package structs_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/opennomad/nomad/structs"
)

func TestParsePortRanges(t *testing.T) {
	cases := []struct {
		spec    string
		want    []int
		wantErr string
	}{
		{"", nil, ""},
		{"22", []int{22}, ""},
		{"22, 80 ,443", []int{22, 80, 443}, ""},
		{"8000-8003", []int{8000, 8001, 8002, 8003}, ""},
		{"22,8000-8001,", []int{22, 8000, 8001}, ""},
		{"http", nil, `invalid port "http"`},
		{"80-x", nil, `invalid port range "80-x"`},
		{"0", nil, `port range "0" out of bounds`},
		{"65536", nil, `port range "65536" out of bounds`},
		{"90-80", nil, `port range "90-80" out of bounds`},
	}
	for _, c := range cases {
		got, err := structs.ParsePortRanges(c.spec)
		if c.wantErr != "" {
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("%q: err = %v, want %q", c.spec, err, c.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q = %v, %v; want %v", c.spec, got, err, c.want)
		}
	}
}

func portNode(min, max int, reserved string) *structs.Node {
	n := fitNode(4000, 4096, 1000)
	n.NodeResources.MinDynamicPort, n.NodeResources.MaxDynamicPort = min, max
	n.NodeResources.Networks = structs.Networks{{Device: "eth0", IP: "10.0.0.5"}}
	return withReserved(n, 0, 0, 0, reserved)
}

func TestNewNetworkIndex(t *testing.T) {
	if _, err := structs.NewNetworkIndex(portNode(0, 0, "22-x")); err == nil ||
		!strings.Contains(err.Error(), `reserved host ports: invalid port range "22-x"`) {
		t.Errorf("bad reservation: %v", err)
	}
	idx, err := structs.NewNetworkIndex(portNode(0, 0, ""))
	if err != nil || idx.HostIP() != "10.0.0.5" {
		t.Errorf("host IP from the node network: %v %v", idx, err)
	}
	n := fitNode(1, 1, 1)
	n.Attributes = map[string]string{"unique.network.ip-address": "10.0.0.9"}
	if idx, _ := structs.NewNetworkIndex(n); idx.HostIP() != "10.0.0.9" {
		t.Errorf("host IP from the fingerprint attribute: %q", idx.HostIP())
	}
}

func TestAssignPorts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name    string
		node    *structs.Node
		taken   []int // held by existing allocs
		asks    structs.Networks
		wantErr string
		check   func(t *testing.T, got structs.AllocatedPorts)
	}{
		{"static port granted as asked", portNode(0, 0, "22"), nil,
			structs.Networks{{ReservedPorts: []structs.Port{{Label: "http", Value: 8080, To: 80}}}}, "",
			func(t *testing.T, got structs.AllocatedPorts) {
				want := structs.AllocatedPortMapping{Label: "http", Value: 8080, To: 80, HostIP: "10.0.0.5"}
				if m, ok := got.Get("http"); !ok || m != want {
					t.Errorf("got %+v", got)
				}
			}},
		{"static port reserved by the node", portNode(0, 0, "22,8080"), nil,
			structs.Networks{{ReservedPorts: []structs.Port{{Label: "http", Value: 8080}}}}, "network: reserved port collision http=8080", nil},
		{"static port held by an alloc", portNode(0, 0, ""), []int{8080},
			structs.Networks{{ReservedPorts: []structs.Port{{Label: "http", Value: 8080}}}}, "network: reserved port collision http=8080", nil},
		{"static port asked twice", portNode(0, 0, ""), nil,
			structs.Networks{{ReservedPorts: []structs.Port{{Label: "a", Value: 9000}, {Label: "b", Value: 9000}}}},
			"network: reserved port collision b=9000", nil},
		{"dynamic ports in range, distinct, free", portNode(20000, 20004, "20000"), []int{20001},
			structs.Networks{{DynamicPorts: []structs.Port{{Label: "a", To: -1}, {Label: "b"}, {Label: "c", To: 9000}}}}, "",
			func(t *testing.T, got structs.AllocatedPorts) {
				// free ports: 20002, 20003, 20004 (20000 reserved, 20001 held)
				var values []int
				for _, m := range got {
					values = append(values, m.Value)
				}
				slices.Sort(values)
				if !slices.Equal(values, []int{20002, 20003, 20004}) {
					t.Errorf("values %v", values)
				}
				a, _ := got.Get("a")
				b, _ := got.Get("b")
				c, _ := got.Get("c")
				if a.To != a.Value || b.To != 0 || c.To != 9000 {
					t.Errorf("mapped ports %+v %+v %+v", a, b, c)
				}
			}},
		{"dynamic range exhausted", portNode(20000, 20001, ""), nil,
			structs.Networks{{DynamicPorts: []structs.Port{{Label: "a"}, {Label: "b"}, {Label: "c"}}}},
			"network: dynamic port selection failed", nil},
		{"static ports are taken before dynamic ones", portNode(20000, 20001, ""), nil,
			structs.Networks{{DynamicPorts: []structs.Port{{Label: "d"}}, ReservedPorts: []structs.Port{{Label: "s", Value: 20000}}}}, "",
			func(t *testing.T, got structs.AllocatedPorts) {
				if d, _ := got.Get("d"); d.Value != 20001 {
					t.Errorf("dynamic port %d, want 20001", d.Value)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			idx, err := structs.NewNetworkIndex(c.node)
			if err != nil {
				t.Fatal(err)
			}
			if c.taken != nil {
				if collide, reason := idx.AddAllocs([]*structs.Allocation{withPorts(fitAlloc("x", 1, 1, 1), c.taken...)}); collide {
					t.Fatal(reason)
				}
			}
			got, err := idx.AssignPorts(c.asks, rng)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, got)
		})
	}
}

// The same seed picks the same dynamic ports, so scheduler tests that
// inject a seeded source are reproducible.
func TestAssignPorts_SeededIsDeterministic(t *testing.T) {
	asks := structs.Networks{{DynamicPorts: []structs.Port{{Label: "a"}, {Label: "b"}}}}
	pick := func() structs.AllocatedPorts {
		idx, _ := structs.NewNetworkIndex(portNode(0, 0, ""))
		got, err := idx.AssignPorts(asks, rand.New(rand.NewPCG(7, 7)))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if a, b := pick(), pick(); !slices.Equal(a, b) {
		t.Fatalf("%v != %v", a, b)
	}
}
