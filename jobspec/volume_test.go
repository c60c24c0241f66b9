package jobspec

import (
	"testing"

	"github.com/opennomad/nomad/api"
)

// Host volumes and their mounts are acted on: parsed with no warning.
func TestParseHostVolume(t *testing.T) {
	res := parseFixture(t, "host_volume.nomad.hcl", Options{})
	if len(res.Warnings) != 0 {
		t.Fatalf("warnings: %q", res.Warnings)
	}
	tg := res.Job.TaskGroups[0]
	assertSameJSON(t, tg.Volumes, map[string]*api.VolumeRequest{
		"data": {Name: "data", Type: "host", Source: "pg-data", AccessMode: "single-node-writer",
			AttachmentMode: "file-system", PerAlloc: true},
		"certs": {Name: "certs", Type: "host", Source: "certs", ReadOnly: true},
	})
	assertSameJSON(t, tg.Tasks[0].VolumeMounts, []*api.VolumeMount{
		{Volume: new("data"), Destination: new("/var/lib/postgresql")},
		{Volume: new("certs"), Destination: new("/etc/ssl/certs"), ReadOnly: new(true)},
	})
}
