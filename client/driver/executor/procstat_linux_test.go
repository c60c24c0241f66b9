package executor

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		state byte
		start uint64
		bad   bool
	}{
		{
			name:  "plain",
			in:    "1234 (sleep) S 1 1234 1234 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 98765 8192 100 18446744073709551615",
			state: 'S', start: 98765,
		},
		{
			// The command name may contain spaces and parentheses.
			name:  "tricky comm",
			in:    "42 (a) b (c)) Z 1 42 42 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 555 0 0",
			state: 'Z', start: 555,
		},
		{name: "truncated", in: "42 (x) S 1 2 3", bad: true},
		{name: "no parens", in: "42 x S", bad: true},
	}
	for _, tc := range cases {
		st, err := parseStat([]byte(tc.in))
		if tc.bad {
			if err == nil {
				t.Errorf("%s: parsed malformed stat", tc.name)
			}
			continue
		}
		if err != nil || st.state != tc.state || st.start != tc.start {
			t.Errorf("%s: got %+v, %v", tc.name, st, err)
		}
	}
}

func TestAliveSelf(t *testing.T) {
	start, err := startTicks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !alive(os.Getpid(), start) {
		t.Fatal("this process is not alive")
	}
	if alive(os.Getpid(), start+1) {
		t.Fatal("a different start time was accepted: a recycled pid would be mistaken for the task")
	}
}
