package nomad

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// blockingLoss is an observer whose LeadershipLost waits for release, as
// a duty of the old term that still waits on Raft does.
type blockingLoss struct {
	lost    chan struct{}
	release chan struct{}
}

func (b *blockingLoss) LeadershipGained(context.Context) {}
func (b *blockingLoss) LeadershipLost() {
	select {
	case b.lost <- struct{}{}:
	default:
	}
	<-b.release
}

// Raft blocks on its leadership notifications. While the leader loop
// winds down (here held by an observer), more notifications come: the
// monitor keeps reading them, so Raft is never stuck on the send (which
// would keep it from answering the very apply the old term's duty waits
// on), and it acts on the last one once the loop stopped.
func TestMonitorLeadership_ReadsNotificationsWhileStopping(t *testing.T) {
	s := newTestServer(t, nil)
	obs := &blockingLoss{lost: make(chan struct{}, 1), release: make(chan struct{})}
	s.AddLeadershipObserver(obs)
	var once sync.Once
	release := func() { once.Do(func() { close(obs.release) }) }
	// Runs before the server's shutdown, should the test fail early.
	t.Cleanup(release)

	// Raft's notifications, played by the test: lost, won, lost, won.
	notify := func(v bool) {
		t.Helper()
		select {
		case s.raftNotifyCh <- v:
		case <-time.After(5 * time.Second):
			t.Fatalf("the monitor stopped reading leadership notifications (sending %v)", v)
		}
	}
	notify(false)
	select {
	case <-obs.lost:
	case <-time.After(5 * time.Second):
		t.Fatal("leadership was not revoked")
	}
	must.False(t, s.isEstablishedLeader())
	// With the channel's one slot, the second of these blocked before.
	notify(true)
	notify(false)
	notify(true)

	release()
	// The last word was "leader": Raft does lead, so the duties return.
	waitFor(t, s.isEstablishedLeader)
}
