package driver

import (
	"strings"
	"testing"
	"time"
)

type sampleConfig struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Count   int      `json:"count"`
	RunFor  Duration `json:"run_for"`
}

func TestDecodeConfig(t *testing.T) {
	cases := []struct {
		name    string
		raw     map[string]interface{}
		want    sampleConfig
		wantErr string
	}{
		{
			name: "codec number types and duration string",
			raw:  map[string]interface{}{"command": "sleep", "args": []interface{}{"1"}, "count": int64(3), "run_for": "1m30s"},
			want: sampleConfig{Command: "sleep", Args: []string{"1"}, Count: 3, RunFor: Duration(90 * time.Second)},
		},
		{
			name: "float that is an integer, duration in ns",
			raw:  map[string]interface{}{"count": float64(2), "run_for": uint64(5)},
			want: sampleConfig{Count: 2, RunFor: 5},
		},
		{
			name:    "unknown key is named",
			raw:     map[string]interface{}{"comand": "sleep"},
			wantErr: `unknown field "comand"`,
		},
		{
			name:    "bad duration",
			raw:     map[string]interface{}{"run_for": "soon"},
			wantErr: `invalid duration "soon"`,
		},
		{
			name:    "wrong type",
			raw:     map[string]interface{}{"args": "not a list"},
			wantErr: "args",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got sampleConfig
			err := DecodeConfig(tc.raw, &got)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Command != tc.want.Command || got.Count != tc.want.Count || got.RunFor != tc.want.RunFor || len(got.Args) != len(tc.want.Args) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseSignal(t *testing.T) {
	for _, name := range []string{"SIGTERM", "sigterm", "TERM", " SIGTERM "} {
		if s, err := ParseSignal(name); err != nil || s.String() != "terminated" {
			t.Errorf("ParseSignal(%q) = %v, %v", name, s, err)
		}
	}
	if s, err := ParseSignal(""); err != nil || s.String() != "interrupt" {
		t.Errorf("ParseSignal(\"\") = %v, %v; want SIGINT", s, err)
	}
	if _, err := ParseSignal("SIGNOPE"); err == nil {
		t.Error("ParseSignal accepted an unknown signal")
	}
}

func TestExitResult(t *testing.T) {
	cases := []struct {
		r    ExitResult
		ok   bool
		text string
	}{
		{ExitResult{}, true, "Exit Code: 0"},
		{ExitResult{ExitCode: 2}, false, "Exit Code: 2"},
		{ExitResult{ExitCode: 137, Signal: 9}, false, "Exit Code: 137, Signal: 9"},
		{ExitResult{OOMKilled: true, ExitCode: 137, Signal: 9}, false, "Exit Code: 137, Signal: 9, OOM Killed"},
	}
	for _, tc := range cases {
		if tc.r.Successful() != tc.ok || tc.r.String() != tc.text {
			t.Errorf("%+v: Successful=%v String=%q", tc.r, tc.r.Successful(), tc.r.String())
		}
	}
}
