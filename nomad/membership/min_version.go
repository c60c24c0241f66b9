package membership

import (
	"strings"

	goversion "github.com/hashicorp/go-version"
	"github.com/hashicorp/serf/serf"
)

// MeetMinimumVersion reports whether every server of servers runs a build
// of version min or later, by the build each advertises in its gossip
// tags. The leader asks it before writing a Raft entry that servers of
// older builds could not apply. Failed servers count (they come back and
// apply the log they missed); servers that left do not. An empty list or
// a build that does not read as a version fails the check: a server
// nobody can vouch for is taken to be old. Only the core version is
// compared, so a development build of a release ("0.2.0-dev (abc123)")
// meets that release.
func MeetMinimumVersion(servers []ServerInfo, min string) bool {
	want, err := goversion.NewVersion(min)
	if err != nil || len(servers) == 0 {
		return false
	}
	for _, s := range servers {
		if s.Status == serf.StatusLeft {
			continue
		}
		build, ok := buildVersion(s.Build)
		if !ok || build.LessThan(want.Core()) {
			return false
		}
	}
	return true
}

// buildVersion reads the version of a build tag, "0.2.0-dev (abc123)".
func buildVersion(build string) (*goversion.Version, bool) {
	head, _, _ := strings.Cut(strings.TrimSpace(build), " ")
	v, err := goversion.NewVersion(head)
	if err != nil {
		return nil, false
	}
	return v.Core(), true
}
