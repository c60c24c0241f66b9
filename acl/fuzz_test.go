package acl

import (
	"errors"
	"strings"
	"testing"

	"github.com/opennomad/nomad/structs"
)

// FuzzParse: Parse never panics; it either returns a policy with at least
// one block, or an error of kind structs.ErrInvalid; and a policy it
// accepts can be compiled and asked questions.
func FuzzParse(f *testing.F) {
	f.Add(`namespace "default" { policy = "read" }`)
	f.Add(`{"namespace":{"default":{"policy":"read"}},"node":{"policy":"write"}}`)
	f.Add(`namespace "*" { variables { path "a/*" { capabilities = ["read"] } } }`)
	f.Fuzz(func(t *testing.T, rules string) {
		p, err := Parse(rules)
		if err != nil {
			if p != nil {
				t.Fatalf("Parse(%q) returned a policy and an error", rules)
			}
			if !errors.Is(err, structs.ErrInvalid) {
				t.Fatalf("Parse(%q): error %q is not of kind ErrInvalid", rules, err)
			}
			// Parse turns a panic into an error; a runtime error is a
			// bug all the same, to be found here.
			if strings.Contains(err.Error(), "runtime error") {
				t.Fatalf("Parse(%q) panicked: %v", rules, err)
			}
			return
		}
		if rules != "" && p.IsEmpty() {
			t.Fatalf("Parse(%q) accepted a policy with no block", rules)
		}
		a, err := NewACL(false, []*Policy{p})
		if err != nil {
			t.Fatalf("NewACL: %v", err)
		}
		a.AllowNamespaceOperation("default", NamespaceCapabilityReadJob)
		a.AllowNamespaceOperation("*", NamespaceCapabilitySubmitJob)
		a.AllowVariableOperation("default", "a/b", VariablesCapabilityRead)
		a.AllowVariableOperation("*", "a/b", VariablesCapabilityRead)
		a.AllowNodePoolOperation("default", NodePoolCapabilityRead)
		a.AllowHostVolumeOperation("v", HostVolumeCapabilityMountReadOnly)
		a.AllowOperatorCapability(OperatorCapabilitySnapshotSave)
	})
}
