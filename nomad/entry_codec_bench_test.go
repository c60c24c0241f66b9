package nomad

import (
	"testing"

	"github.com/opennomad/nomad/structs"
)

// BenchmarkEntryCodec measures the msgpack cost of the two largest Raft
// entries of a job's life, taken from a short BenchmarkJobCost run: the
// job's registration and the plan result that places its alloc. Decode
// is what every server pays per entry in FSM.Apply; encode is the
// leader's cost of writing it.
//
//	go test -run x -bench BenchmarkEntryCodec -benchmem -count 6 ./nomad
func BenchmarkEntryCodec(b *testing.B) {
	run := runJobCost(b, 20)
	cases := []struct {
		name string
		t    structs.MessageType
		new  func() any
	}{
		{"JobRegister", structs.JobRegisterRequestType, func() any { return new(structs.JobRegisterRequest) }},
		{"ApplyPlanResults", structs.ApplyPlanResultsRequestType, func() any { return new(structs.ApplyPlanResultsRequest) }},
	}
	for _, c := range cases {
		// The largest entry of the type: the plan result that places an
		// alloc rather than the one that only updates a deployment.
		var entry []byte
		for _, l := range run.entries {
			if len(l.Data) > 0 && structs.MessageType(l.Data[0]) == c.t && len(l.Data) > len(entry) {
				entry = l.Data
			}
		}
		if entry == nil {
			b.Fatalf("no %s entry in the run", c.t)
		}
		body := entry[1:]
		b.Run(c.name+"/decode", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := structs.Decode(body, c.new()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/encode", func(b *testing.B) {
			req := c.new()
			if err := structs.Decode(body, req); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := structs.Encode(c.t, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
