package command

import (
	"fmt"
	"strconv"
	"strings"
)

// stringSlice is a repeatable string flag (-var a=1 -var b=2).
type stringSlice []string

func (s *stringSlice) String() string { return strings.Join(*s, ",") }

func (s *stringSlice) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// optionalBool is a boolean flag that remembers whether it was given, so
// that a command changes only what the user named. "-flag" alone means
// true; "-flag=false" is an explicit false.
type optionalBool struct {
	set   bool
	value bool
}

func (b *optionalBool) String() string {
	if !b.set {
		return ""
	}
	return strconv.FormatBool(b.value)
}

func (b *optionalBool) Set(v string) error {
	parsed, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q is not a boolean (use true or false)", v)
	}
	b.set, b.value = true, parsed
	return nil
}

// IsBoolFlag lets the flag package accept "-flag" without a value.
func (b *optionalBool) IsBoolFlag() bool { return true }

// apply writes the value into dst when the flag was given.
func (b *optionalBool) apply(dst *bool) {
	if b.set {
		*dst = b.value
	}
}

// optionalUint is an unsigned integer flag that remembers whether it was
// given, for -check-index where 0 is a meaningful value ("the job must not
// exist yet").
type optionalUint struct {
	set   bool
	value uint64
}

func (u *optionalUint) String() string {
	if !u.set {
		return ""
	}
	return strconv.FormatUint(u.value, 10)
}

func (u *optionalUint) Set(v string) error {
	parsed, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not a non-negative integer", v)
	}
	u.set, u.value = true, parsed
	return nil
}

// optionalString is a string flag that remembers whether it was given.
type optionalString struct {
	value string
	set   bool
}

func (s *optionalString) String() string { return s.value }

func (s *optionalString) Set(v string) error {
	s.value, s.set = v, true
	return nil
}
