package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

// A registration answered 429 is counted and sent again after the
// answer's Retry-After (0 here, so the test does not wait) until it is
// accepted.
func TestRegister_BacksOffOn429AndCountsIt(t *testing.T) {
	var seen atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen.Add(1) <= 2 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Write([]byte(`{"EvalID": "e1"}`))
	}))
	defer srv.Close()
	c, err := api.NewClient(&api.Config{Address: srv.URL, BackoffRetries: -1})
	must.NoError(t, err)

	track := newTracker("load-x", 1, 1, false)
	must.NoError(t, register(context.Background(), c, &api.Job{ID: new("load-x-0")}, 0, track))
	must.Eq(t, 3, seen.Load())
	must.Eq(t, 2, track.throttled.Load())
}
