package login

import (
	"fmt"
	"strings"

	"github.com/opennomad/nomad/structs"
)

// interpolate fills the "${name}" references of s from vars, as Nomad's
// HIL templates of bind names and token names read: a reference to a
// name vars lacks (a claim this login did not carry) is an error, and an
// unclosed "${" too. lower lowercases the values, as bind names do.
func interpolate(s string, vars map[string]string, lower bool) (string, error) {
	var b strings.Builder
	for {
		start := strings.Index(s, "${")
		if start < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		end := strings.Index(s[start:], "}")
		if end < 0 {
			return "", fmt.Errorf("unclosed reference in %q", s)
		}
		name := strings.TrimSpace(s[start+2 : start+end])
		v, ok := vars[name]
		if !ok {
			return "", fmt.Errorf("unknown variable accessed: %s", name)
		}
		if lower {
			v = strings.ToLower(v)
		}
		b.WriteString(s[:start])
		b.WriteString(v)
		s = s[start+end+1:]
	}
}

// TokenName is the name of a token made by a login through the method:
// its TokenNameFormat (Nomad's default when empty) with
// ${auth_method_type}, ${auth_method_name} and ${value.<name>} filled in.
func TokenName(format, methodType, methodName string, claims *ClaimSet) (string, error) {
	if format == "" {
		format = structs.DefaultACLAuthMethodTokenNameFormat
	}
	vars := claims.vars()
	vars["auth_method_type"] = methodType
	vars["auth_method_name"] = methodName
	name, err := interpolate(format, vars, false)
	if err != nil {
		return "", fmt.Errorf("failed to generate ACL token name: %w", err)
	}
	return name, nil
}
