package structs

import (
	"errors"
	"strings"
	"testing"
)

func TestNamespace_Validate(t *testing.T) {
	cases := []struct {
		name string
		ns   *Namespace
		want string // "" valid
	}{
		{"default", NewDefaultNamespace(), ""},
		{"dashes and digits", &Namespace{Name: "team-1"}, ""},
		{"wildcard", &Namespace{Name: "*"}, `invalid name "*". Must match regex ^[a-zA-Z0-9-]{1,128}$`},
		{"too long", &Namespace{Name: strings.Repeat("a", 129)}, "invalid name"},
		{"description", &Namespace{Name: "a", Description: strings.Repeat("d", 257)}, "description longer than 256"},
		{"quota", &Namespace{Name: "a", Quota: "q"}, `namespace "a" using non-existent quota "q"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.ns.Validate()
			if c.want == "" {
				if err != nil {
					t.Fatalf("invalid: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("error = %v, want %q of kind ErrInvalid", err, c.want)
			}
		})
	}
}

func TestNamespace_HashAndCopy(t *testing.T) {
	a := &Namespace{Name: "a", Meta: map[string]string{"x": "1", "y": "2"},
		Capabilities: &NamespaceCapabilities{EnabledTaskDrivers: []string{"exec"}}}
	h := string(a.SetHash())
	c := a.Copy()
	c.Meta["x"] = "changed"
	c.Capabilities.EnabledTaskDrivers[0] = "docker"
	if a.Meta["x"] != "1" || a.Capabilities.EnabledTaskDrivers[0] != "exec" {
		t.Fatal("the copy shares maps or slices")
	}
	if string(c.SetHash()) == h {
		t.Fatal("the hash ignores meta and capabilities")
	}
	if string(a.Copy().SetHash()) != h {
		t.Fatal("the hash is not stable")
	}
}

func TestNamespace_CheckJob(t *testing.T) {
	job := func(driver, mode string) *Job {
		tg := &TaskGroup{Name: "g", Tasks: []*Task{{Name: "t", Driver: driver}}}
		if mode != "-" {
			tg.Networks = Networks{{Mode: mode}}
		}
		return &Job{ID: "j", TaskGroups: []*TaskGroup{tg}}
	}
	cases := []struct {
		name string
		caps *NamespaceCapabilities
		job  *Job
		want string // "" allowed
	}{
		{"no capabilities", nil, job("docker", "bridge"), ""},
		{"enabled driver", &NamespaceCapabilities{EnabledTaskDrivers: []string{"exec"}}, job("exec", "-"), ""},
		{"driver not enabled", &NamespaceCapabilities{EnabledTaskDrivers: []string{"exec"}}, job("raw_exec", "-"),
			`used task driver "raw_exec" is not allowed in namespace "n"`},
		{"driver disabled", &NamespaceCapabilities{DisabledTaskDrivers: []string{"raw_exec"}}, job("raw_exec", "-"),
			`used task driver "raw_exec" is not allowed in namespace "n"`},
		{"no mode is host", &NamespaceCapabilities{DisabledNetworkModes: []string{"host"}}, job("exec", ""),
			`used group network mode "host" is not allowed in namespace "n"`},
		{"mode not enabled", &NamespaceCapabilities{EnabledNetworkModes: []string{"host"}}, job("exec", "bridge"),
			`used group network mode "bridge" is not allowed in namespace "n"`},
		{"mode enabled", &NamespaceCapabilities{EnabledNetworkModes: []string{"bridge"}}, job("exec", "bridge"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := (&Namespace{Name: "n", Capabilities: c.caps}).CheckJob(c.job)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("error = %v, want %q of kind ErrInvalid", err, c.want)
			}
		})
	}
}
