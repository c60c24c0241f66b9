// Package version holds the build's version, reported by `nomad version`,
// the agent's self endpoint and node fingerprints.
package version

// Version is the semantic version of this build.
var Version = "0.3.0"

// Prerelease marks development builds ("dev"); empty for releases.
var Prerelease = "dev"

// GitCommit is set at build time with -ldflags.
var GitCommit = ""

// String renders "0.3.0-dev (abcdef12)".
func String() string {
	v := Version
	if Prerelease != "" {
		v += "-" + Prerelease
	}
	if GitCommit != "" {
		v += " (" + GitCommit + ")"
	}
	return v
}
