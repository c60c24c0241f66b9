package structs_test

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestJob_RevertedCopy(t *testing.T) {
	v := mock.Job()
	v.Stable, v.Status, v.StatusDescription = true, structs.JobStatusRunning, "x"
	v.VersionTag = &structs.JobVersionTag{Name: "golden"}
	c := v.RevertedCopy()
	must.False(t, c.Stable)
	must.Nil(t, c.VersionTag)
	must.Eq(t, "", c.Status)
	must.False(t, v.SpecChanged(c), must.Sprint("the spec is the version's"))
	must.NotNil(t, v.VersionTag, must.Sprint("the stored version is untouched"))
}

func TestJob_VersionTagIsNoSpecChange(t *testing.T) {
	v := mock.Job()
	tagged := v.Copy()
	tagged.VersionTag = &structs.JobVersionTag{Name: "golden", TaggedTime: 1}
	must.False(t, v.SpecChanged(tagged))
	c := tagged.Copy()
	c.VersionTag.Name = "copy"
	must.Eq(t, "golden", tagged.VersionTag.Name, must.Sprint("Copy copies the tag"))
}

func TestJobScaleRequest_Problems(t *testing.T) {
	neg, one := int64(-1), int64(1)
	target := map[string]string{structs.ScalingTargetGroup: "web"}
	cases := []struct {
		name string
		req  structs.JobScaleRequest
		want []string
	}{
		{"count", structs.JobScaleRequest{Target: target, Count: &one}, nil},
		{"error only", structs.JobScaleRequest{Target: target, Error: true}, nil},
		{"no group", structs.JobScaleRequest{Count: &one}, []string{"missing task group name for scaling action"}},
		{"negative", structs.JobScaleRequest{Target: target, Count: &neg}, []string{"scaling action count can't be negative"}},
		{"error with count", structs.JobScaleRequest{Target: target, Count: &one, Error: true},
			[]string{"scaling action should not contain count if error is true"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, tc.req.Problems())
		})
	}
}
