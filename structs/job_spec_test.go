package structs

import "testing"

func TestJobSpecChanged(t *testing.T) {
	base := func() *Job {
		return &Job{
			ID: "web", Namespace: DefaultNamespace, Type: JobTypeService, Priority: 50,
			TaskGroups: []*TaskGroup{{Name: "api", Count: 2}},
		}
	}
	cases := []struct {
		name    string
		edit    func(j *Job)
		changed bool
	}{
		{"identical", func(*Job) {}, false},
		{"server-maintained fields only", func(j *Job) {
			j.Status = JobStatusRunning
			j.StatusDescription = "x"
			j.Stable = true
			j.Version = 4
			j.SubmitTime = 99
			j.CreateIndex, j.ModifyIndex, j.JobModifyIndex = 1, 2, 3
		}, false},
		{"priority", func(j *Job) { j.Priority = 60 }, true},
		{"stop", func(j *Job) { j.Stop = true }, true},
		{"group count", func(j *Job) { j.TaskGroups[0].Count = 3 }, true},
		{"meta added", func(j *Job) { j.Meta = map[string]string{"a": "b"} }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := base(), base()
			tc.edit(b)
			if got := a.SpecChanged(b); got != tc.changed {
				t.Fatalf("SpecChanged = %v, want %v", got, tc.changed)
			}
		})
	}
	if !(*Job)(nil).SpecChanged(base()) || (*Job)(nil).SpecChanged(nil) {
		t.Fatal("nil handling")
	}
}
