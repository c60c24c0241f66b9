package taskenv

import "strings"

// Replace substitutes every ${key} in s that names a node value or a
// variable of the environment. Unknown references stay as written.
func (e *Env) Replace(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		key := s[i+2 : i+2+j]
		b.WriteString(s[:i])
		if v, ok := e.lookup(key); ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+3+j])
		}
		s = s[i+3+j:]
	}
}

func (e *Env) lookup(key string) (string, bool) {
	key = strings.TrimSpace(key)
	if strings.HasPrefix(key, "node.") || strings.HasPrefix(key, "attr.") || strings.HasPrefix(key, "meta.") {
		v, ok := e.node[key]
		return v, ok
	}
	v, ok := e.vars[key]
	return v, ok
}

// ReplaceConfig returns a copy of a driver config with every string,
// however deeply nested in maps and lists, interpolated.
func (e *Env) ReplaceConfig(cfg map[string]interface{}) map[string]interface{} {
	if cfg == nil {
		return nil
	}
	out := make(map[string]interface{}, len(cfg))
	for k, v := range cfg {
		out[k] = e.replaceValue(v)
	}
	return out
}

func (e *Env) replaceValue(v interface{}) interface{} {
	switch x := v.(type) {
	case string:
		return e.Replace(x)
	case map[string]interface{}:
		return e.ReplaceConfig(x)
	case []interface{}:
		out := make([]interface{}, len(x))
		for i, item := range x {
			out[i] = e.replaceValue(item)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, item := range x {
			out[i] = e.Replace(item)
		}
		return out
	case []map[string]interface{}:
		out := make([]map[string]interface{}, len(x))
		for i, item := range x {
			out[i] = e.ReplaceConfig(item)
		}
		return out
	default:
		return v
	}
}
