package membership

import (
	"testing"

	"github.com/hashicorp/serf/serf"
	"github.com/shoenig/test/must"
)

func TestMeetMinimumVersion(t *testing.T) {
	server := func(build string, status serf.MemberStatus) ServerInfo {
		return ServerInfo{Name: "s." + build, Build: build, Status: status}
	}
	alive := serf.StatusAlive
	cases := []struct {
		name    string
		servers []ServerInfo
		min     string
		want    bool
	}{
		{"every server at the version", []ServerInfo{server("0.2.0", alive), server("0.2.0", alive)}, "0.2.0", true},
		{"a newer server", []ServerInfo{server("0.2.0", alive), server("1.0.0", alive)}, "0.2.0", true},
		{"one older server", []ServerInfo{server("0.2.0", alive), server("0.1.0", alive)}, "0.2.0", false},
		{"a development build of the release meets it", []ServerInfo{server("0.2.0-dev (7b59616)", alive)}, "0.2.0", true},
		{"a development build of the one before does not", []ServerInfo{server("0.1.0-dev (7b59616)", alive)}, "0.2.0", false},
		{"a failed older server counts: it comes back", []ServerInfo{server("0.2.0", alive), server("0.1.0", serf.StatusFailed)}, "0.2.0", false},
		{"an older server that left does not count", []ServerInfo{server("0.2.0", alive), server("0.1.0", serf.StatusLeft)}, "0.2.0", true},
		{"a build that is no version", []ServerInfo{server("0.2.0", alive), server("unknown", alive)}, "0.2.0", false},
		{"a server without a build tag", []ServerInfo{server("0.2.0", alive), server("", alive)}, "0.2.0", false},
		{"no server known", nil, "0.2.0", false},
		{"servers of the last release before a newer minimum", []ServerInfo{server("0.3.0-dev (7b59616)", alive), server("0.2.0", alive)}, "0.3.0", false},
		{"every server at the newer minimum", []ServerInfo{server("0.3.0-dev (7b59616)", alive), server("0.3.0", alive)}, "0.3.0", true},
		{"a minimum that is no version", []ServerInfo{server("0.2.0", alive)}, "next", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			must.Eq(t, c.want, MeetMinimumVersion(c.servers, c.min))
		})
	}
}
