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

func TestIsUUID(t *testing.T) {
	cases := []struct {
		in   string
		want bool
	}{
		{GenerateUUID(), true},
		{"0B5D8E0C-1A2B-4C3D-8E9F-0A1B2C3D4E5F", true},
		{"", false},
		{"0b5d8e0c1a2b4c3d8e9f0a1b2c3d4e5f", false},
		{"0b5d8e0c-1a2b-4c3d-8e9f-0a1b2c3d4e5", false},
		{"0b5d8e0c-1a2b-4c3d-8e9f-0a1b2c3d4e5g", false},
		{"0b5d8e0c-1a2b-4c3d-8e9f_0a1b2c3d4e5f", false},
	}
	for _, tc := range cases {
		if got := IsUUID(tc.in); got != tc.want {
			t.Errorf("IsUUID(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func BenchmarkGenerateUUID(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		GenerateUUID()
	}
}
