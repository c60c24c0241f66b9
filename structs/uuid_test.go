package structs

import (
	"regexp"
	"testing"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestGenerateUUID_IsRandomVersion4(t *testing.T) {
	seen := make(map[string]bool)
	for range 1000 {
		id := GenerateUUID()
		if !uuidV4.MatchString(id) {
			t.Fatalf("%q is not a version 4 UUID", id)
		}
		if seen[id] {
			t.Fatalf("%q generated twice", id)
		}
		seen[id] = true
	}
}

func BenchmarkGenerateUUID(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		GenerateUUID()
	}
}
