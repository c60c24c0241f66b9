package structs

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestTimeToBlock(t *testing.T) {
	cases := []struct {
		name string
		req  interface{ TimeToBlock() time.Duration }
		want time.Duration
	}{
		{"non-blocking query", &QueryOptions{MaxQueryTime: time.Minute}, 0},
		{"default wait", &QueryOptions{MinQueryIndex: 5}, DefaultBlockingWait + DefaultBlockingWait/16},
		{"own wait", &QueryOptions{MinQueryIndex: 5, MaxQueryTime: 16 * time.Second}, 17 * time.Second},
		{"capped wait", &QueryOptions{MinQueryIndex: 5, MaxQueryTime: time.Hour}, MaxBlockingWait + MaxBlockingWait/16},
		{"write", &WriteRequest{}, 0},
		{"embedded query", &JobSpecificRequest{QueryOptions: QueryOptions{MinQueryIndex: 1, MaxQueryTime: 32 * time.Second}}, 34 * time.Second},
		{"dequeue", &EvalDequeueRequest{Timeout: 500 * time.Millisecond}, 500 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, tc.req.TimeToBlock())
		})
	}
}
