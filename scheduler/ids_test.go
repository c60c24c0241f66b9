package scheduler

import (
	"regexp"
	"testing"
)

func TestIDSourceFormat(t *testing.T) {
	var s idSource
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 3 * idBlock {
		id := s.next()
		if !uuid.MatchString(id) {
			t.Fatalf("bad uuid %q", id)
		}
		if seen[id] {
			t.Fatalf("duplicate %q", id)
		}
		seen[id] = true
	}
}
