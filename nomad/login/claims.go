package login

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/structs"
)

// ClaimSet is what a login's claims become: the values and lists the
// method's claim mappings pick out, under the names the mappings give.
// Selectors read it as value.<name> and list.<name>; bind and token name
// templates read the values as ${value.<name>}.
type ClaimSet struct {
	structs.ACLAuthClaims
}

// MapClaims picks a login's claims out by the method's ClaimMappings
// (claim → value name) and ListClaimMappings (claim → list name). A
// claim is a top-level name, or a JSON pointer ("/org/team") into nested
// claims. userInfo, an OIDC provider's UserInfo answer, adds to the ID
// token's claims but never replaces its iss or sub, which the provider
// signed. A claim the login lacks maps to nothing; a claim of a type no
// string can stand for (an object) is an error.
func MapClaims(cfg *structs.ACLAuthMethodConfig, claims, userInfo map[string]interface{}) (*ClaimSet, error) {
	all := maps.Clone(claims)
	if all == nil {
		all = map[string]interface{}{}
	}
	for k, v := range userInfo {
		if k == "iss" || k == "sub" {
			if _, signed := claims[k]; signed {
				continue
			}
		}
		all[k] = v
	}
	set := &ClaimSet{structs.ACLAuthClaims{Value: map[string]string{}, List: map[string][]string{}}}
	if cfg == nil {
		return set, nil
	}
	for claim, name := range cfg.ClaimMappings {
		raw, ok := lookupClaim(all, claim)
		if !ok {
			continue
		}
		s, ok := claimString(raw)
		if !ok {
			return nil, fmt.Errorf("claim %q: cannot map a %T to a string", claim, raw)
		}
		set.Value[name] = s
	}
	for claim, name := range cfg.ListClaimMappings {
		raw, ok := lookupClaim(all, claim)
		if !ok {
			continue
		}
		items, ok := raw.([]interface{})
		if !ok {
			// A provider may send a one-item list as the item alone.
			items = []interface{}{raw}
		}
		list := make([]string, 0, len(items))
		for _, item := range items {
			s, ok := claimString(item)
			if !ok {
				return nil, fmt.Errorf("list claim %q: cannot map a %T to a string", claim, item)
			}
			if s != "" {
				list = append(list, s)
			}
		}
		set.List[name] = list
	}
	return set, nil
}

// vars are the set's values as templates name them: value.<name>.
func (c *ClaimSet) vars() map[string]string {
	out := make(map[string]string, len(c.Value)+2)
	for k, v := range c.Value {
		out["value."+k] = v
	}
	return out
}

// lookupClaim finds a claim by name, or by JSON pointer (RFC 6901) when
// it starts with "/".
func lookupClaim(all map[string]interface{}, claim string) (interface{}, bool) {
	if !strings.HasPrefix(claim, "/") {
		v, ok := all[claim]
		return v, ok && v != nil
	}
	var cur interface{} = all
	for _, part := range strings.Split(claim[1:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch node := cur.(type) {
		case map[string]interface{}:
			v, ok := node[part]
			if !ok {
				return nil, false
			}
			cur = v
		case []interface{}:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			cur = node[i]
		default:
			return nil, false
		}
	}
	return cur, cur != nil
}

// claimString is the string a scalar claim stands for: strings as they
// are, booleans as true/false, numbers as integers (JSON decodes them as
// float64; claims such as IDs and times are integers).
func claimString(v interface{}) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		return strconv.FormatInt(int64(v), 10), true
	case json.Number:
		return v.String(), true
	case int:
		return strconv.Itoa(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	}
	return "", false
}
