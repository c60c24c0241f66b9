package structs

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestPeriodicConfig_Next(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	must.NoError(t, err)
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	must.NoError(t, err)
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		must.NoError(t, err)
		return v
	}
	cases := []struct {
		name string
		cfg  PeriodicConfig
		from time.Time
		want time.Time
	}{
		{
			name: "every 15 minutes, strictly after a matching instant",
			cfg:  PeriodicConfig{Spec: "*/15 * * * *"},
			from: utc("2026-03-01T10:15:00Z"),
			want: utc("2026-03-01T10:30:00Z"),
		},
		{
			name: "fractions of a second round down",
			cfg:  PeriodicConfig{Spec: "*/15 * * * *"},
			from: utc("2026-03-01T10:14:59Z").Add(999 * time.Millisecond),
			want: utc("2026-03-01T10:15:00Z"),
		},
		{
			name: "daily at 02:00 read in UTC by default",
			cfg:  PeriodicConfig{Spec: "0 2 * * *"},
			from: utc("2026-03-01T03:00:00Z"),
			want: utc("2026-03-02T02:00:00Z"),
		},
		{
			// 02:00 in Tokyo (UTC+9, no DST) is 17:00 UTC the day before.
			name: "daily at 02:00 in Asia/Tokyo",
			cfg:  PeriodicConfig{Spec: "0 2 * * *", TimeZone: "Asia/Tokyo"},
			from: utc("2026-03-01T03:00:00Z"),
			want: time.Date(2026, 3, 2, 2, 0, 0, 0, tokyo),
		},
		{
			// New York is UTC-5 in winter: 09:00 local = 14:00 UTC.
			name: "weekdays at 09:00 in America/New_York, winter",
			cfg:  PeriodicConfig{Spec: "0 9 * * 1-5", TimeZone: "America/New_York"},
			from: utc("2026-01-09T15:00:00Z"), // Friday 10:00 local
			want: time.Date(2026, 1, 12, 9, 0, 0, 0, ny),
		},
		{
			// After the DST switch (2026-03-08) New York is UTC-4:
			// 09:00 local = 13:00 UTC.
			name: "daily at 09:00 in America/New_York across the DST switch",
			cfg:  PeriodicConfig{Spec: "0 9 * * *", TimeZone: "America/New_York"},
			from: time.Date(2026, 3, 7, 10, 0, 0, 0, ny),
			want: utc("2026-03-08T13:00:00Z"),
		},
		{
			name: "earliest of several specs",
			cfg:  PeriodicConfig{Spec: "0 12 * * *", Specs: []string{"30 6 * * *", "0 18 * * *"}},
			from: utc("2026-03-01T07:00:00Z"),
			want: utc("2026-03-01T12:00:00Z"),
		},
		{
			name: "a spec that never fires again",
			cfg:  PeriodicConfig{Spec: "0 0 1 1 * 2020"},
			from: utc("2026-03-01T07:00:00Z"),
			want: time.Time{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cfg.Next(tc.from)
			must.NoError(t, err)
			must.True(t, got.Equal(tc.want), must.Sprintf("got %v, want %v", got, tc.want))
		})
	}
}

func TestPeriodicConfig_NextErrors(t *testing.T) {
	from := time.Unix(1_700_000_000, 0)
	_, err := (&PeriodicConfig{Spec: "not a spec"}).Next(from)
	must.ErrorContains(t, err, `invalid cron spec "not a spec"`)
	_, err = (&PeriodicConfig{Spec: "* * * * *", TimeZone: "Mars/Olympus"}).Next(from)
	must.ErrorContains(t, err, `invalid time zone "Mars/Olympus"`)
	_, err = (&PeriodicConfig{}).Next(from)
	must.ErrorContains(t, err, "no cron spec")
	var nilCfg *PeriodicConfig
	_, err = nilCfg.Next(from)
	must.Error(t, err)
}

func TestPeriodicChildIDRoundTrip(t *testing.T) {
	launch := time.Unix(1_700_000_123, 0).UTC()
	id := PeriodicChildID("report", launch)
	must.Eq(t, "report/periodic-1700000123", id)

	got, ok := PeriodicLaunchTime("report", id)
	must.True(t, ok)
	must.True(t, got.Equal(launch))

	for _, other := range []string{"report", "report/periodic-", "report/periodic-x1", "reports/periodic-1", "report/dispatch-1-abc"} {
		_, ok := PeriodicLaunchTime("report", other)
		must.False(t, ok, must.Sprint(other))
	}
}

// Parsed specs are shared between callers; concurrent use must not race
// (run with -race).
func TestPeriodicConfig_NextConcurrent(t *testing.T) {
	cfg := &PeriodicConfig{Spec: "0 9 L * *", TimeZone: "Europe/Berlin"}
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	want, err := cfg.Next(from)
	must.NoError(t, err)
	done := make(chan time.Time, 8)
	for i := 0; i < 8; i++ {
		go func() {
			var got time.Time
			for k := 0; k < 50; k++ {
				got, _ = cfg.Next(from)
			}
			done <- got
		}()
	}
	for i := 0; i < 8; i++ {
		must.True(t, (<-done).Equal(want))
	}
}
