package aclreplication

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Config is what Run needs.
type Config struct {
	// Region is the authoritative region; Token a management token of it
	// (the agent's acl.replication_token).
	Region string
	Token  string
	// RPC calls an RPC as a remote caller would; the requests name
	// Region, so the server sends them there. Called from Run's
	// goroutines, possibly after Run returned (a blocking query that was
	// under way when ctx ended runs out on its own).
	RPC func(method string, args, reply interface{}) error
	// State is this region's state store, Apply writes one Raft entry of
	// this region and returns once it is applied.
	State func() *state.StateStore
	Apply func(t structs.MessageType, msg interface{}) (uint64, error)

	// WaitTime bounds one blocking query on the authoritative region.
	WaitTime time.Duration
	// RetryMin and RetryMax bound the wait after a failed pass, which
	// doubles from one failure to the next.
	RetryMin, RetryMax time.Duration

	Logger hclog.Logger
}

// Defaults for the zero fields of Config.
const (
	defaultWaitTime = 5 * time.Minute
	defaultRetryMin = 500 * time.Millisecond
	defaultRetryMax = 30 * time.Second
)

// Run copies every kind of shared ACL object until ctx ends, one loop per
// kind, and returns once they all stopped. Kinds depend on each other
// (a role names policies, a binding rule an auth method): a write that
// the local state refuses for want of another kind's object fails its
// pass, which is tried again once the other loop has caught up.
func Run(ctx context.Context, cfg Config) {
	if cfg.WaitTime <= 0 {
		cfg.WaitTime = defaultWaitTime
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = defaultRetryMin
	}
	if cfg.RetryMax < cfg.RetryMin {
		cfg.RetryMax = max(defaultRetryMax, cfg.RetryMin)
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	logger := cfg.Logger.Named("acl_replication")
	logger.Info("replicating ACL objects", "from_region", cfg.Region)
	var wg sync.WaitGroup
	for _, k := range kinds(&cfg) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replicate(ctx, &cfg, k, logger.With("kind", k.name))
		}()
	}
	wg.Wait()
}

// replicate is the loop of one kind: wait for the authoritative list to
// pass the index last copied, copy the difference, repeat.
func replicate(ctx context.Context, cfg *Config, k kind, logger hclog.Logger) {
	var lastIndex uint64
	retry := cfg.RetryMin
	for ctx.Err() == nil {
		index, err := pass(ctx, cfg, k, lastIndex)
		if err == nil {
			lastIndex = index
			retry = cfg.RetryMin
			continue
		}
		if ctx.Err() != nil {
			return
		}
		logger.Warn("replication pass failed; retrying", "error", err, "retry_in", retry)
		t := time.NewTimer(retry)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		retry = min(2*retry, cfg.RetryMax)
	}
}

// pass waits for the authoritative list of k to pass minIndex, then makes
// the local copy equal to it; it returns the index of the list copied.
func pass(ctx context.Context, cfg *Config, k kind, minIndex uint64) (uint64, error) {
	var remote map[string][]byte
	var index uint64
	err := callCtx(ctx, func() error {
		var err error
		remote, index, err = k.list(cfg.query(minIndex))
		return err
	})
	if err != nil {
		return 0, err
	}
	local, err := k.local(cfg.State())
	if err != nil {
		return 0, err
	}
	upsert, remove := diff(local, remote)
	if len(remove) > 0 {
		t, msg := k.remove(remove)
		if _, err := cfg.Apply(t, msg); err != nil {
			return 0, err
		}
	}
	if len(upsert) > 0 {
		var t structs.MessageType
		var msg interface{}
		err := callCtx(ctx, func() error {
			var err error
			t, msg, err = k.fetch(cfg.query(0), upsert)
			return err
		})
		if err != nil {
			return 0, err
		}
		if msg != nil {
			if _, err := cfg.Apply(t, msg); err != nil {
				return 0, err
			}
		}
	}
	return index, nil
}

// query is the read options of every request to the authoritative region.
func (cfg *Config) query(minIndex uint64) structs.QueryOptions {
	return structs.QueryOptions{
		Region: cfg.Region, AuthToken: cfg.Token,
		MinQueryIndex: minIndex, MaxQueryTime: cfg.WaitTime,
		// Any server of the authoritative region answers: its state is
		// as good as its leader's for a copy that follows it anyway.
		AllowStale: true,
	}
}

// errStopped ends a call whose context ended first.
var errStopped = errors.New("replication stopped")

// callCtx runs fn (a call to the authoritative region, which may block
// for up to WaitTime) and returns its error, or errStopped as soon as ctx
// ends: the call then runs out on its own and its result is dropped.
func callCtx(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return errStopped
	}
}
