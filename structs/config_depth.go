package structs

// MaxConfigDepth bounds the nesting of a task's free-form driver config.
// Real driver configs nest a handful of levels; the bound keeps every
// job far below the depth the Raft log's decoder accepts (MaxDecodeDepth),
// so a job that passes validation can always be applied.
const MaxConfigDepth = 32

// ConfigDepth is the nesting depth of a free-form value (a scalar is 0, a
// map or list of scalars 1), counted no further than limit+1 so that a
// hostile value costs no more than the limit to measure.
func ConfigDepth(v interface{}, limit int) int {
	return configDepth(v, 0, limit)
}

func configDepth(v interface{}, depth, limit int) int {
	if depth > limit {
		return depth
	}
	deepest := depth
	visit := func(child interface{}) bool {
		if d := configDepth(child, depth+1, limit); d > deepest {
			deepest = d
		}
		return deepest > limit
	}
	switch t := v.(type) {
	case map[string]interface{}:
		if t == nil {
			return depth
		}
		deepest = depth + 1
		for _, c := range t {
			if visit(c) {
				break
			}
		}
	case []interface{}:
		deepest = depth + 1
		for _, c := range t {
			if visit(c) {
				break
			}
		}
	case []map[string]interface{}:
		deepest = depth + 1
		for _, c := range t {
			if visit(c) {
				break
			}
		}
	}
	return deepest
}
