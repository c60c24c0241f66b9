package taskrunner

import (
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestHostVolumeMounts(t *testing.T) {
	node := mock.Node(mock.HostVolume("data", "/srv/data", false), mock.HostVolume("certs", "/etc/ssl/certs", true),
		mock.HostVolume("pg[1]", "/srv/pg1", false))
	cases := []struct {
		name    string
		vols    map[string]*structs.VolumeRequest
		mounts  []*structs.VolumeMount
		index   int
		want    []driver.Mount
		wantErr string
	}{
		{name: "none"},
		{
			name:   "read-write",
			vols:   map[string]*structs.VolumeRequest{"d": {Type: "host", Source: "data"}},
			mounts: []*structs.VolumeMount{{Volume: "d", Destination: "/var/lib/data"}},
			want:   []driver.Mount{{HostPath: "/srv/data", TaskPath: "/task/var/lib/data"}},
		},
		{
			name:   "read-only by the mount, the request or the node",
			vols:   map[string]*structs.VolumeRequest{"d": {Type: "host", Source: "data"}, "r": {Type: "host", Source: "data", ReadOnly: true}, "c": {Type: "host", Source: "certs", ReadOnly: true}},
			mounts: []*structs.VolumeMount{{Volume: "d", Destination: "a", ReadOnly: true}, {Volume: "r", Destination: "b"}, {Volume: "c", Destination: "c"}},
			want: []driver.Mount{{HostPath: "/srv/data", TaskPath: "/task/a", ReadOnly: true},
				{HostPath: "/srv/data", TaskPath: "/task/b", ReadOnly: true}, {HostPath: "/etc/ssl/certs", TaskPath: "/task/c", ReadOnly: true}},
		},
		{
			name:   "a destination cannot leave the task directory",
			vols:   map[string]*structs.VolumeRequest{"d": {Type: "host", Source: "data"}},
			mounts: []*structs.VolumeMount{{Volume: "d", Destination: "../../etc"}},
			want:   []driver.Mount{{HostPath: "/srv/data", TaskPath: "/task/etc"}},
		},
		{
			name:   "per_alloc takes the alloc's index",
			vols:   map[string]*structs.VolumeRequest{"d": {Type: "host", Source: "pg", PerAlloc: true}},
			mounts: []*structs.VolumeMount{{Volume: "d", Destination: "/pg"}},
			index:  1,
			want:   []driver.Mount{{HostPath: "/srv/pg1", TaskPath: "/task/pg"}},
		},
		{
			name:    "the node lacks the volume",
			vols:    map[string]*structs.VolumeRequest{"d": {Type: "host", Source: "pg", PerAlloc: true}},
			mounts:  []*structs.VolumeMount{{Volume: "d", Destination: "/pg"}},
			wantErr: `volume "d": host volume "pg[0]" is not offered by this node`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := mock.Alloc()
			a.Name = structs.AllocName(a.JobID, a.TaskGroup, tc.index)
			a.Job.LookupTaskGroup(a.TaskGroup).Volumes = tc.vols
			task := &structs.Task{Name: "t", VolumeMounts: tc.mounts}
			got, err := hostVolumeMounts(a, task, node, "/task")
			if tc.wantErr != "" {
				must.Error(t, err)
				must.True(t, strings.Contains(err.Error(), tc.wantErr), must.Sprint(err))
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
		})
	}
}
