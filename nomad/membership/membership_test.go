package membership

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"
	"github.com/shoenig/test/must"
)

// Three servers expecting three bootstrap Raft once all three gossip,
// and not before; each ends up with the same three-voter configuration
// from the one bootstrap entry.
func TestBootstrapExpect_ThreeServers(t *testing.T) {
	c := newTestCluster(t)
	a := c.start("a", 3, nil)
	b := c.start("b", 3, nil)
	_, err := b.m.Join([]string{a.serfAddr()})
	must.NoError(t, err)

	// Two of three: nothing happens.
	waitFor(t, func() bool { return len(a.m.Servers()) == 2 })
	time.Sleep(200 * time.Millisecond)
	must.SliceEmpty(t, voters(t, a.raft))
	must.SliceEmpty(t, voters(t, b.raft))
	select {
	case <-a.m.Bootstrapped():
		t.Fatal("bootstrapped with two of three servers")
	default:
	}

	cc := c.start("c", 3, nil)
	_, err = cc.m.Join([]string{b.serfAddr()})
	must.NoError(t, err)

	leader := c.leader()
	want := []string{"id-a", "id-b", "id-c"}
	var bootstraps int64
	for _, n := range []*testNode{a, b, cc} {
		select {
		case <-n.m.Bootstrapped():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not settle bootstrapping", n.name)
		}
		waitFor(t, func() bool { return slices.Equal(want, sorted(voters(t, n.raft))) })
		must.LessEq(t, 1, n.counting.bootstraps.Load(), must.Sprintf("%s bootstraps at most once", n.name))
		bootstraps += n.counting.bootstraps.Load()
	}
	must.Positive(t, bootstraps)
	must.NoError(t, leader.raft.Apply([]byte("x"), 5*time.Second).Error())
}

// A server that finds another server with Raft peers does not bootstrap:
// it waits to be added by the existing cluster's leader.
func TestBootstrapExpect_ExistingClusterIsJoined(t *testing.T) {
	c := newTestCluster(t)
	var asked atomic.Int64
	a := c.start("a", 2, func(cfg *Config) {
		cfg.PeerCount = func(ctx context.Context, addr string) (int, error) {
			asked.Add(1)
			return 2, nil
		}
	})
	b := c.start("b", 2, func(cfg *Config) {
		cfg.PeerCount = func(ctx context.Context, addr string) (int, error) { return 0, nil }
	})
	_, err := a.m.Join([]string{b.serfAddr()})
	must.NoError(t, err)

	for _, n := range []*testNode{a, b} {
		select {
		case <-n.m.Bootstrapped():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not settle bootstrapping", n.name)
		}
	}
	must.Positive(t, asked.Load())
	// b bootstrapped {a, b}; a never did and learns the configuration
	// from b's leadership.
	must.Eq(t, b, c.leader())
	waitFor(t, func() bool { return len(voters(t, a.raft)) == 2 })
}

// A peer check that fails postpones bootstrapping; it is retried.
func TestBootstrapExpect_RetriesFailedPeerCheck(t *testing.T) {
	c := newTestCluster(t)
	var calls atomic.Int64
	a := c.start("a", 2, func(cfg *Config) {
		cfg.PeerCount = func(ctx context.Context, addr string) (int, error) {
			if calls.Add(1) < 3 {
				return 0, errors.New("connection refused")
			}
			return 0, nil
		}
	})
	b := c.start("b", 0, nil)
	_, err := b.m.Join([]string{a.serfAddr()})
	must.NoError(t, err)
	select {
	case <-a.m.Bootstrapped():
	case <-time.After(10 * time.Second):
		t.Fatal("a did not bootstrap")
	}
	must.GreaterEq(t, 3, calls.Load())
	must.Eq(t, []string{"id-a", "id-b"}, sorted(voters(t, a.raft)))
}

func TestBootstrapServers(t *testing.T) {
	srv := func(name string, expect int, bootstrap bool) ServerInfo {
		return ServerInfo{Name: name, ID: "id-" + name, Expect: expect, Bootstrap: bootstrap, Status: serf.StatusAlive}
	}
	cases := []struct {
		name    string
		alive   []ServerInfo
		expect  int
		wantIDs []string
		wantErr string
		waiting bool
	}{
		{name: "too few", alive: []ServerInfo{srv("a", 3, false), srv("b", 3, false)}, expect: 3, waiting: true},
		{name: "enough, sorted by ID", alive: []ServerInfo{srv("c", 3, false), srv("a", 3, false), srv("b", 3, false)},
			expect: 3, wantIDs: []string{"id-a", "id-b", "id-c"}},
		{name: "a server without expect counts", alive: []ServerInfo{srv("a", 2, false), srv("b", 0, false)},
			expect: 2, wantIDs: []string{"id-a", "id-b"}},
		{name: "conflicting expect", alive: []ServerInfo{srv("a", 3, false), srv("b", 5, false), srv("c", 3, false)},
			expect: 3, wantErr: "server b expects 5 servers, this one 3"},
		{name: "a server bootstrapping alone", alive: []ServerInfo{srv("a", 3, false), srv("b", 1, true)},
			expect: 3, wantErr: "expects 1 servers"},
		{name: "single server", alive: []ServerInfo{srv("a", 1, true)}, expect: 1, wantIDs: []string{"id-a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bootstrapServers(tc.alive, tc.expect)
			switch {
			case tc.waiting:
				must.ErrorIs(t, err, errWaiting)
			case tc.wantErr != "":
				must.ErrorContains(t, err, tc.wantErr)
			default:
				must.NoError(t, err)
				var ids []string
				for _, s := range got {
					ids = append(ids, s.ID)
				}
				must.Eq(t, tc.wantIDs, ids)
			}
		})
	}
}

// The leader adds a server that joins gossip as a voter, and removes it
// when it leaves.
func TestReconcile_AddsAndRemovesVoters(t *testing.T) {
	c := newTestCluster(t)
	a := c.start("a", 3, nil)
	b := c.start("b", 3, nil)
	cc := c.start("c", 3, nil)
	for _, n := range []*testNode{b, cc} {
		_, err := n.m.Join([]string{a.serfAddr()})
		must.NoError(t, err)
	}
	leader := c.leader()
	waitFor(t, func() bool { return len(voters(t, leader.raft)) == 3 })

	d := c.start("d", 0, nil)
	_, err := d.m.Join([]string{b.serfAddr()})
	must.NoError(t, err)
	waitFor(t, func() bool { return slices.Contains(voters(t, leader.raft), "id-d") })
	// d learned the configuration and follows the leader.
	waitFor(t, func() bool { return len(voters(t, d.raft)) == 4 })

	must.NoError(t, d.m.Leave())
	d.stop()
	waitFor(t, func() bool { return !slices.Contains(voters(t, leader.raft), "id-d") })
	must.Eq(t, []string{"id-a", "id-b", "id-c"}, sorted(voters(t, leader.raft)))
}

// A server rebuilt with a new data dir comes back under its old address
// with a new Raft ID: the leader replaces the stale entry.
func TestReconcile_ReplacesServerWithNewID(t *testing.T) {
	c := newTestCluster(t)
	a := c.start("a", 2, nil)
	b := c.start("b", 2, nil)
	_, err := b.m.Join([]string{a.serfAddr()})
	must.NoError(t, err)
	leader := c.leader()
	waitFor(t, func() bool { return len(voters(t, leader.raft)) == 2 })
	other := a
	if leader == a {
		other = b
	}

	configuration := raft.Configuration{Servers: []raft.Server{
		{ID: raft.ServerID(leader.m.cfg.ServerID), Address: raft.ServerAddress(leader.addr)},
		{ID: "id-stale", Address: raft.ServerAddress(other.addr)},
	}}
	// Exercise addVoter directly with a configuration where other's
	// address belongs to a stale ID: the stale entry is removed first.
	info, _, ok := leader.m.servers.byID(other.m.cfg.ServerID)
	must.True(t, ok)
	must.NoError(t, leader.m.addVoter(configuration, info))
	must.Eq(t, 2, len(voters(t, leader.raft)))
}

// A server that stays failed past the grace period is removed from Raft
// (and gossip), while the remaining voters keep a majority.
func TestDeadServerCleanup(t *testing.T) {
	c := newTestCluster(t)
	tune := func(cfg *Config) {
		cfg.DeadServerGrace = 300 * time.Millisecond
		cfg.CleanupInterval = 50 * time.Millisecond
	}
	leader, victim := c.threeVoters(tune)
	failedAt := time.Now()
	victim.stop()
	waitFor(t, func() bool { return !slices.Contains(voters(t, leader.raft), victim.m.cfg.ServerID) })
	must.Greater(t, 300*time.Millisecond, time.Since(failedAt), must.Sprint("removed only after the grace period"))
	waitFor(t, func() bool {
		for _, m := range leader.m.KnownServers() {
			if m.ID == victim.m.cfg.ServerID {
				return m.Status == serf.StatusLeft
			}
		}
		return true
	})
}

func TestRemovableDead(t *testing.T) {
	cases := []struct {
		voters, dead, minQuorum int
		want                    bool
	}{
		{voters: 3, dead: 0, want: false},
		{voters: 3, dead: 1, want: true},  // 2 of 3 remain: a majority
		{voters: 3, dead: 2, want: false}, // 1 of 3 is no majority
		{voters: 2, dead: 1, want: false}, // 1 of 2 is no majority
		{voters: 5, dead: 2, want: true},  // 3 of 5
		{voters: 5, dead: 3, want: false},
		{voters: 4, dead: 1, want: true}, // 3 of 4
		{voters: 4, dead: 2, want: false},
		{voters: 3, dead: 1, minQuorum: 3, want: false}, // would leave 2 < 3
		{voters: 5, dead: 2, minQuorum: 3, want: true},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d voters %d dead min %d", tc.voters, tc.dead, tc.minQuorum), func(t *testing.T) {
			must.Eq(t, tc.want, removableDead(tc.voters, tc.dead, tc.minQuorum))
		})
	}
}

// force-leave turns a failed member into a left one, which the leader
// removes from Raft at once rather than after the grace period.
func TestForceLeave(t *testing.T) {
	c := newTestCluster(t)
	leader, victim := c.threeVoters(nil)
	victim.stop()
	waitForStatus(t, leader, victim, serf.StatusFailed)
	// The bare node name is qualified with the region.
	must.NoError(t, leader.m.ForceLeave(victim.name, true))
	waitFor(t, func() bool { return !slices.Contains(voters(t, leader.raft), victim.m.cfg.ServerID) })
	// Pruned: gone from the member list too, not listed as left.
	waitFor(t, func() bool {
		for _, m := range leader.m.Members() {
			if m.Name == victim.name+"."+victim.m.cfg.Region {
				return false
			}
		}
		return true
	})
}

// force-leave with prune of a member gossip still believes alive answers
// only once the member is gone, as Nomad's did: callers list the members
// right after it. Serf itself prunes such a member in the background.
func TestForceLeave_PruneAliveAnswersWhenGone(t *testing.T) {
	slowProbes := func(cfg *Config) {
		cfg.Tune = func(sc *serf.Config) {
			fastGossip(sc)
			// The stopped member must still look alive when it is pruned.
			sc.MemberlistConfig.ProbeInterval = time.Minute
			sc.BroadcastTimeout = 300 * time.Millisecond
		}
	}
	c := newTestCluster(t)
	a := c.start("a", 0, slowProbes)
	b := c.start("b", 0, slowProbes)
	_, err := a.m.Join([]string{b.serfAddr()})
	must.NoError(t, err)
	waitFor(t, func() bool { return a.m.isMember("b.global") })

	b.stop()
	must.NoError(t, a.m.ForceLeave("b", true))
	must.False(t, a.m.isMember("b.global"))
}

// Members carry Nomad's name and tags; Servers lists the alive ones.
func TestMembersAndServers(t *testing.T) {
	c := newTestCluster(t)
	a := c.start("a", 2, func(cfg *Config) { cfg.Datacenter = "east" })
	b := c.start("b", 2, nil)
	_, err := a.m.Join([]string{b.serfAddr()})
	must.NoError(t, err)
	waitFor(t, func() bool { return len(a.m.Members()) == 2 && len(a.m.Servers()) == 2 })

	var self = a.m.LocalMember()
	must.Eq(t, "a.global", self.Name)
	// This server first, then the others by name, the same on every call.
	must.Eq(t, "a.global", a.m.Members()[0].Name)
	must.Eq(t, "b.global", b.m.Members()[0].Name)
	must.Eq(t, "127.0.0.1", self.Addr)
	must.Eq(t, uint16(a.serf), self.Port)
	must.Eq(t, "alive", self.Status)
	must.Eq(t, map[string]string{
		"role": "nomad", "region": "global", "dc": "east", "build": "test",
		"port": "20000", "rpc_addr": "127.0.0.1", "id": "id-a", "raft_vsn": "3",
		"expect": "2", "bootstrap": "0",
	}, self.Tags)

	servers := a.m.Servers()
	must.Len(t, 2, servers)
	must.Eq(t, "a.global", servers[0].Name)
	must.Eq(t, a.addr, servers[0].RPCAddr)
	must.Eq(t, "east", servers[0].Datacenter)
	must.Eq(t, b.addr, servers[1].RPCAddr)

	b.stop()
	waitFor(t, func() bool { return len(a.m.Servers()) == 1 })
	must.Len(t, 2, a.m.KnownServers())
}

// Servers of another region gossip in the same pool (as over the WAN)
// but are not this region's servers.
func TestOtherRegionIsIgnored(t *testing.T) {
	c := newTestCluster(t)
	a := c.start("a", 0, nil)
	b := c.start("b", 0, func(cfg *Config) { cfg.Region = "europe" })
	_, err := a.m.Join([]string{b.serfAddr()})
	must.NoError(t, err)
	waitFor(t, func() bool { return len(a.m.Members()) == 2 })
	must.Len(t, 1, a.m.Servers())
	must.Eq(t, "b.europe", b.m.LocalMember().Name)
}

// RetryJoin keeps trying until the address answers.
func TestRetryJoin(t *testing.T) {
	c := newTestCluster(t)
	port := freePort(t)
	b := c.start("b", 0, nil)
	done := b.m.RetryJoin([]string{fmt.Sprintf("127.0.0.1:%d", port)}, 50*time.Millisecond, 0)
	time.Sleep(150 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("joined nobody: %v", err)
	default:
	}
	c.startOnPort("a", 0, port, nil)
	select {
	case err := <-done:
		must.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("retry join did not succeed")
	}
	waitFor(t, func() bool { return len(b.m.Servers()) == 2 })
}

// RetryJoin gives up after max attempts.
func TestRetryJoin_Max(t *testing.T) {
	c := newTestCluster(t)
	b := c.start("b", 0, nil)
	start := time.Now()
	done := b.m.RetryJoin([]string{fmt.Sprintf("127.0.0.1:%d", freePort(t))}, 20*time.Millisecond, 3)
	select {
	case err := <-done:
		must.ErrorIs(t, err, ErrJoinExhausted)
		must.ErrorContains(t, err, "3 attempts")
		must.Greater(t, 40*time.Millisecond, time.Since(start))
	case <-time.After(10 * time.Second):
		t.Fatal("retry join did not give up")
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

// The stored autopilot configuration can turn the cleanup off, or ask
// for more voters to remain than the agent's min_quorum.
func TestDeadServerCleanup_Policy(t *testing.T) {
	c := newTestCluster(t)
	var mu sync.Mutex
	enabled, minQuorum := false, 0
	tune := func(cfg *Config) {
		cfg.DeadServerGrace = 100 * time.Millisecond
		cfg.CleanupInterval = 20 * time.Millisecond
		cfg.CleanupPolicy = func() (bool, int) {
			mu.Lock()
			defer mu.Unlock()
			return enabled, minQuorum
		}
	}
	setPolicy := func(on bool, min int) {
		mu.Lock()
		defer mu.Unlock()
		enabled, minQuorum = on, min
	}
	leader, victim := c.threeVoters(tune)
	victim.stop()
	waitForStatus(t, leader, victim, serf.StatusFailed)

	// Off, and then on but with three voters to keep: the failed server
	// stays for many cleanup rounds past its grace.
	for _, p := range []struct {
		on  bool
		min int
	}{{false, 0}, {true, 3}} {
		setPolicy(p.on, p.min)
		time.Sleep(300 * time.Millisecond)
		must.SliceContains(t, voters(t, leader.raft), victim.m.cfg.ServerID, must.Sprintf("policy %+v", p))
	}

	setPolicy(true, 2)
	waitFor(t, func() bool { return !slices.Contains(voters(t, leader.raft), victim.m.cfg.ServerID) })
}
