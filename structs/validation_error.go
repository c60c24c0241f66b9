package structs

import (
	"errors"
	"fmt"
	"strings"
)

// ValidationError carries every problem found in an object, each already
// prefixed with the path to the offending field, so a user fixes all of
// them in one round trip. The HTTP layer answers it with 400.
type ValidationError struct {
	Problems []string
}

// Error lists the problems one per line.
func (v *ValidationError) Error() string {
	if len(v.Problems) == 1 {
		return v.Problems[0]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d validation errors:", len(v.Problems))
	for _, p := range v.Problems {
		b.WriteString("\n  * ")
		b.WriteString(p)
	}
	return b.String()
}

// IsValidationError reports whether err (or anything it wraps) is a
// validation failure.
func IsValidationError(err error) bool {
	var v *ValidationError
	return errors.As(err, &v)
}

// problems accumulates validation errors under a path prefix.
type problems struct {
	list []string
}

func (p *problems) add(prefix string, format string, args ...interface{}) {
	msg := fmt.Sprintf(format, args...)
	if prefix != "" {
		msg = prefix + ": " + msg
	}
	p.list = append(p.list, msg)
}

func (p *problems) addErrs(prefix string, errs []error) {
	for _, e := range errs {
		p.add(prefix, "%s", e.Error())
	}
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &ValidationError{Problems: p.list}
}

func joinPath(prefix, elem string) string {
	if prefix == "" {
		return elem
	}
	return prefix + ": " + elem
}
