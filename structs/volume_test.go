package structs_test

import (
	"reflect"
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func hostVolume(name, source string) map[string]*structs.VolumeRequest {
	return map[string]*structs.VolumeRequest{name: {Name: name, Type: structs.VolumeTypeHost, Source: source}}
}

func TestValidate_Volumes(t *testing.T) {
	vol := func(edit func(v *structs.VolumeRequest)) func(j *structs.Job) {
		return func(j *structs.Job) {
			tg0(j).Volumes = hostVolume("data", "pg")
			edit(tg0(j).Volumes["data"])
		}
	}
	mount := func(m *structs.VolumeMount) func(j *structs.Job) {
		return func(j *structs.Job) {
			tg0(j).Volumes = hostVolume("data", "pg")
			task0(j).VolumeMounts = append(task0(j).VolumeMounts, m)
		}
	}
	const v = grp + `: volume "data"`
	const m1 = task + ": volume_mount 1"
	runValidationCases(t, []validationCase{
		{"host volume and its mount", nil, mount(&structs.VolumeMount{Volume: "data", Destination: "/data"}), nil},
		{"read-only reader", nil, vol(func(v *structs.VolumeRequest) {
			v.ReadOnly, v.AccessMode, v.AttachmentMode = true, structs.VolumeAccessModeSingleNodeReader, structs.VolumeAttachmentModeFilesystem
		}), nil},
		{"per_alloc", nil, vol(func(v *structs.VolumeRequest) { v.PerAlloc = true }), nil},
		{"nil volume", nil, func(j *structs.Job) { tg0(j).Volumes = map[string]*structs.VolumeRequest{"data": nil} },
			[]string{v + ": volume is empty"}},
		{"host volume without source", nil, vol(func(v *structs.VolumeRequest) { v.Source = "" }),
			[]string{v + ": source is required"}},
		{"no type", nil, vol(func(v *structs.VolumeRequest) { v.Type = "" }), []string{v + `: type is required: "host"`}},
		{"csi", nil, vol(func(v *structs.VolumeRequest) { v.Type = "csi" }),
			[]string{v + `: type "csi" is not supported by this server`}},
		{"unknown type", nil, vol(func(v *structs.VolumeRequest) { v.Type = "nfs" }),
			[]string{v + `: type "nfs" must be "host" or "csi"`}},
		{"label differs from name", nil, vol(func(v *structs.VolumeRequest) { v.Name = "other" }),
			[]string{v + `: name "other" differs from the block's label`}},
		{"bad modes", nil, vol(func(v *structs.VolumeRequest) { v.AccessMode, v.AttachmentMode = "many", "nfs" }),
			[]string{v + `: access_mode "many" must be one of`, v + `: attachment_mode "nfs" must be`}},
		{"read only writer", nil, vol(func(v *structs.VolumeRequest) {
			v.ReadOnly, v.AccessMode = true, structs.VolumeAccessModeSingleNodeWriter
		}), []string{v + `: read_only conflicts with access_mode "single-node-writer"`}},
		{"mount options on a host volume", nil, vol(func(v *structs.VolumeRequest) { v.MountOptions = &structs.CSIMountOptions{} }),
			[]string{v + ": mount_options are only for csi volumes"}},
		{"per_alloc with canaries", nil, func(j *structs.Job) {
			vol(func(v *structs.VolumeRequest) { v.PerAlloc = true })(j)
			tg0(j).Update = structs.DefaultUpdateStrategy()
			tg0(j).Update.Canary = 1
		}, []string{v + ": per_alloc volumes cannot be used with canaries"}},
		{"mount of an unknown volume", nil, mount(&structs.VolumeMount{Volume: "logs", Destination: "/logs"}),
			[]string{m1 + `: volume "logs" is not one of the group's volume blocks`}},
		{"mount without volume or destination", nil, mount(&structs.VolumeMount{}),
			[]string{m1 + ": volume is required", m1 + ": destination is required"}},
		{"nil mount", nil, mount(nil), []string{m1 + ": volume_mount is empty"}},
		{"two mounts at one destination", nil, func(j *structs.Job) {
			mount(&structs.VolumeMount{Volume: "data", Destination: "/data"})(j)
			task0(j).VolumeMounts = append(task0(j).VolumeMounts, &structs.VolumeMount{Volume: "data", Destination: "/data/"})
		}, []string{task + `: volume_mount 2: destination "/data/" is already mounted`}},
		{"bad propagation", nil, mount(&structs.VolumeMount{Volume: "data", Destination: "/d", PropagationMode: "shared"}),
			[]string{m1 + `: propagation_mode "shared" must be`}},
	})
}

func TestVolumeRequest_SourceFor(t *testing.T) {
	v := &structs.VolumeRequest{Source: "pg"}
	if got := v.SourceFor(3); got != "pg" {
		t.Errorf("plain: %q", got)
	}
	v.PerAlloc = true
	if got := v.SourceFor(3); got != "pg[3]" {
		t.Errorf("per_alloc: %q", got)
	}
}

// Volumes and their mounts are job fields: they cross Raft unchanged.
func TestEncodeDecode_JobVolumes(t *testing.T) {
	job := mock.Job()
	tg0(job).Volumes = map[string]*structs.VolumeRequest{"data": {
		Name: "data", Type: structs.VolumeTypeHost, Source: "pg", ReadOnly: true, Sticky: true, PerAlloc: true,
		AccessMode: structs.VolumeAccessModeSingleNodeReader, AttachmentMode: structs.VolumeAttachmentModeFilesystem,
		MountOptions: &structs.CSIMountOptions{FSType: "ext4", MountFlags: []string{"noatime"}},
	}}
	task0(job).VolumeMounts = []*structs.VolumeMount{{Volume: "data", Destination: "/data", ReadOnly: true,
		PropagationMode: structs.VolumeMountPropagationPrivate, SELinuxLabel: "z"}}
	req := &structs.JobRegisterRequest{Job: job}
	var out structs.JobRegisterRequest
	roundTrip(t, structs.JobRegisterRequestType, req, &out)
	if !reflect.DeepEqual(tg0(out.Job).Volumes, tg0(job).Volumes) {
		t.Errorf("volumes: got %+v", tg0(out.Job).Volumes["data"])
	}
	if !reflect.DeepEqual(task0(out.Job).VolumeMounts, task0(job).VolumeMounts) {
		t.Errorf("volume mounts: got %+v", task0(out.Job).VolumeMounts[0])
	}
	if d, err := job.Diff(out.Job, false); err != nil || d.Type != structs.DiffTypeNone {
		t.Fatalf("job changed in transit: %v\n%s", err, d)
	}
}
