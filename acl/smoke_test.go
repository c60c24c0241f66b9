package acl

import "testing"

func TestSmoke(t *testing.T) {
	p, err := Parse(`namespace "default" { policy = "read" }`)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := NewACL(false, []*Policy{p})
	if !a.AllowNamespaceOperation("default", NamespaceCapabilityReadJob) || a.AllowNamespaceOperation("default", NamespaceCapabilitySubmitJob) {
		t.Fatal("wrong")
	}
}
