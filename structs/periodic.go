package structs

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/cronexpr"
)

// PeriodicLaunchSuffix separates a periodic template's ID from the launch
// time in the IDs of the jobs it launches: "<parent>/periodic-<unix>".
const PeriodicLaunchSuffix = "/periodic-"

// PeriodicLaunch records when a periodic template last launched a child.
// The leader's dispatcher reads it after an election to catch up on a
// launch that fell due while no server was leading.
type PeriodicLaunch struct {
	// ID and Namespace name the template (the parent job).
	ID        string
	Namespace string
	Launch    time.Time

	CreateIndex uint64
	ModifyIndex uint64
}

// locations caches loaded time zones by name: time.LoadLocation reads
// the zone database from disk on every call, and the periodic dispatcher
// asks for every template's zone on every pass.
var locations sync.Map // string -> *time.Location

// Location returns the time zone the cron specs are read in: TimeZone,
// or UTC when it is empty.
func (p *PeriodicConfig) Location() (*time.Location, error) {
	if p == nil || p.TimeZone == "" {
		return time.UTC, nil
	}
	if loc, ok := locations.Load(p.TimeZone); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(p.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("periodic: invalid time zone %q: %w", p.TimeZone, err)
	}
	locations.Store(p.TimeZone, loc)
	return loc, nil
}

// specs returns every cron expression of the config, Spec first.
func (p *PeriodicConfig) specs() []string {
	if p.Spec == "" {
		return p.Specs
	}
	return append([]string{p.Spec}, p.Specs...)
}

// Next returns the first launch time strictly after from, the earliest
// over all specs, read in the config's time zone (the result is in that
// zone). A zero time means no spec ever fires again (a spec naming only
// past years). Cron fields have one-second resolution: a from with
// fractions of a second is rounded down first.
func (p *PeriodicConfig) Next(from time.Time) (time.Time, error) {
	if p == nil {
		return time.Time{}, fmt.Errorf("periodic: no periodic config")
	}
	loc, err := p.Location()
	if err != nil {
		return time.Time{}, err
	}
	specs := p.specs()
	if len(specs) == 0 {
		return time.Time{}, fmt.Errorf("periodic: no cron spec")
	}
	var next time.Time
	for _, s := range specs {
		n, err := cronNext(s, from.In(loc))
		if err != nil {
			return time.Time{}, err
		}
		if !n.IsZero() && (next.IsZero() || n.Before(next)) {
			next = n
		}
	}
	return next, nil
}

// cronExpr is a parsed spec. An Expression keeps scratch state while it
// computes, so each is used under its lock.
type cronExpr struct {
	mu   sync.Mutex
	expr *cronexpr.Expression
}

// cronExprs caches parsed specs by their text: parsing costs tens of
// microseconds, and the dispatcher asks for every template's next launch
// on every pass. maxCronExprs bounds it; past that it starts over.
var (
	cronExprsMu sync.Mutex
	cronExprs   = map[string]*cronExpr{}
)

const maxCronExprs = 10_000

// cronNext returns the first time after from that spec names.
func cronNext(spec string, from time.Time) (time.Time, error) {
	cronExprsMu.Lock()
	c, ok := cronExprs[spec]
	cronExprsMu.Unlock()
	if !ok {
		expr, err := cronexpr.Parse(spec)
		if err != nil {
			return time.Time{}, fmt.Errorf("periodic: invalid cron spec %q: %w", spec, err)
		}
		c = &cronExpr{expr: expr}
		cronExprsMu.Lock()
		if len(cronExprs) >= maxCronExprs {
			cronExprs = map[string]*cronExpr{}
		}
		cronExprs[spec] = c
		cronExprsMu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.expr.Next(from), nil
}

// PeriodicChildID is the ID of the job a template launches at launch.
func PeriodicChildID(parentID string, launch time.Time) string {
	return parentID + PeriodicLaunchSuffix + strconv.FormatInt(launch.Unix(), 10)
}

// PeriodicLaunchTime parses the launch time out of the ID of a job that
// the periodic template parentID launched; ok is false for any other ID.
func PeriodicLaunchTime(parentID, childID string) (launch time.Time, ok bool) {
	rest, found := strings.CutPrefix(childID, parentID+PeriodicLaunchSuffix)
	if !found || rest == "" {
		return time.Time{}, false
	}
	sec, err := strconv.ParseInt(rest, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(sec, 0).UTC(), true
}
