package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The types generated for are the roots' closure less embedded types:
// an embedded type's methods would be promoted to its embedder.
func TestCodecTypes(t *testing.T) {
	dir := t.TempDir()
	src := `package structs

type JobRegisterRequest struct {
	Job *Job
	Tags Tags
	WriteRequest
}

type WriteRequest struct{ Region string }

type Job struct {
	Groups []*Group
	ByName map[string]Meta
	Iface  interface{ M() }
	Scores Scores
}

type Scores []Score
type Score struct{ N string }

func (Scores) CodecEncodeSelf(e *codec.Encoder) {}

type Group struct{ Count int }
type Meta struct{ V string }
type Tags []string
type Unreached struct{ X int }
type Other struct{ Job }
type Fn func()
`
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := roots
	roots = []string{"JobRegisterRequest"}
	t.Cleanup(func() { roots = saved })
	_, pkg, err := parseDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := codecTypes(pkg)
	if err != nil {
		t.Fatal(err)
	}
	// Job is embedded by Other, so it is left out even though reached;
	// Scores has a codec of its own, so neither it nor Score is generated.
	want := []string{"Group", "JobRegisterRequest", "Meta", "Tags"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}

	roots = []string{"Missing"}
	if _, err := codecTypes(pkg); err == nil {
		t.Fatal("a root that is not a type of the package was accepted")
	}
}
