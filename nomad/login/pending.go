package login

import (
	"sync"
	"time"

	capoidc "github.com/hashicorp/cap/oidc"

	"github.com/opennomad/nomad/structs"
)

// Pending holds the OIDC logins begun and not yet completed, by state,
// for a short while. It lives in the memory of the server that began
// them, which is the leader (logins are writes, forwarded there), as
// Nomad keeps its own in its servers' memory: a login interrupted by a
// leader change, or left longer than the TTL, is simply begun again, and
// no secret of it (the PKCE verifier) is ever written to Raft or disk.
// Anyone may begin a login, so the number held is bounded.
type Pending struct {
	mu    sync.Mutex
	ttl   time.Duration
	max   int
	items map[string]*PendingLogin
}

// PendingLogin is one OIDC login between its two steps.
type PendingLogin struct {
	Method      string
	ClientNonce string
	RedirectURI string
	Request     *capoidc.Req
	expires     time.Time
}

// ErrTooManyPendingLogins: Pending is full of logins not yet expired.
var ErrTooManyPendingLogins = structs.KindErrorf(structs.ErrBackpressure, "too many OIDC logins in progress, try again later")

// NewPending holds up to max logins, each for ttl.
func NewPending(ttl time.Duration, max int) *Pending {
	return &Pending{ttl: ttl, max: max, items: map[string]*PendingLogin{}}
}

// TTL is how long a login is held.
func (p *Pending) TTL() time.Duration { return p.ttl }

// Put holds l under its request's state until now+TTL.
func (p *Pending) Put(l *PendingLogin, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.items) >= p.max {
		p.prune(now)
		if len(p.items) >= p.max {
			return ErrTooManyPendingLogins
		}
	}
	l.expires = now.Add(p.ttl)
	p.items[l.Request.State()] = l
	return nil
}

// Take removes and returns the login begun with state; nil when none is
// held or it has expired. A login completes at most once.
func (p *Pending) Take(state string, now time.Time) *PendingLogin {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.items[state]
	delete(p.items, state)
	if l == nil || now.After(l.expires) {
		return nil
	}
	return l
}

// Len is the number of logins held, expired or not.
func (p *Pending) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.items)
}

func (p *Pending) prune(now time.Time) {
	for k, l := range p.items {
		if now.After(l.expires) {
			delete(p.items, k)
		}
	}
}
