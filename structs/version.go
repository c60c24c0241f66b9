package structs

import (
	"fmt"
	"regexp"
	"sync"

	version "github.com/hashicorp/go-version"
)

// ParseVersionConstraint parses the right-hand side of a `version` or
// `semver` constraint such as ">= 1.2, < 2". The two operators differ only
// in how the node's value is parsed (see ParseVersion).
func ParseVersionConstraint(rtarget string) (version.Constraints, error) {
	return version.NewConstraint(rtarget)
}

// strictSemver is the Semantic Versioning 2.0 syntax: exactly three
// numeric parts without leading zeros, then an optional pre-release and
// build. The library's own "semver" parser also accepts "1.2" and
// "1.2.3.4", which the semver operator must not.
var strictSemver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
	`(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// ParseVersion parses a node attribute as a version. For `semver`
// constraints only strict semantic versions (1.2.3, 1.2.3-beta.1) are
// accepted; `version` constraints take anything version-like (1.2, v1.2.3).
func ParseVersion(v string, strict bool) (*version.Version, error) {
	if strict {
		if !strictSemver.MatchString(v) {
			return nil, fmt.Errorf("%q is not a semantic version (major.minor.patch)", v)
		}
		return version.NewSemver(v)
	}
	return version.NewVersion(v)
}

// CheckVersionConstraint evaluates `lhs <op> rhs` for the version and
// semver operators. A prerelease on either side only matches when the
// constraint itself names a prerelease, which is how both operators behave
// in Nomad.
func CheckVersionConstraint(lhs, rhs string, strict bool) (bool, error) {
	v, err := ParseVersion(lhs, strict)
	if err != nil {
		return false, fmt.Errorf("parsing version %q: %w", lhs, err)
	}
	cs, err := cachedVersionConstraint(rhs, strict)
	if err != nil {
		return false, err
	}
	return cs.Check(v), nil
}

type versionKey struct {
	text   string
	semver bool
}

// Constraint strings repeat across every node of a pass; parsing each time
// would dominate feasibility checking for large clusters.
var versionCache sync.Map // versionKey -> version.Constraints

func cachedVersionConstraint(rhs string, strictSemver bool) (version.Constraints, error) {
	key := versionKey{rhs, strictSemver}
	if v, ok := versionCache.Load(key); ok {
		return v.(version.Constraints), nil
	}
	cs, err := ParseVersionConstraint(rhs)
	if err != nil {
		return nil, fmt.Errorf("parsing version constraint %q: %w", rhs, err)
	}
	versionCache.Store(key, cs)
	return cs, nil
}

var regexpCache sync.Map // string -> *regexp.Regexp

// compileRegexp compiles and caches a constraint pattern.
func compileRegexp(pattern string) (*regexp.Regexp, error) {
	if v, ok := regexpCache.Load(pattern); ok {
		return v.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	regexpCache.Store(pattern, re)
	return re, nil
}

// MatchRegexp reports whether value matches the cached pattern.
func MatchRegexp(pattern, value string) (bool, error) {
	re, err := compileRegexp(pattern)
	if err != nil {
		return false, fmt.Errorf("compiling regexp %q: %w", pattern, err)
	}
	return re.MatchString(value), nil
}
