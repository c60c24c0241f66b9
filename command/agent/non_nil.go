package agent

// nonNil returns an empty slice for nil, so lists encode as [] and not
// null, as Nomad's do.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
