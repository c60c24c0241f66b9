package structs_test

import (
	"errors"
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// nestedConfig is a driver config whose value nests depth maps deep.
func nestedConfig(depth int) map[string]interface{} {
	var v interface{} = "leaf"
	for range depth - 1 {
		v = map[string]interface{}{"a": v}
	}
	return map[string]interface{}{"nested": v}
}

// CheckEntry accepts only entries the log's decoder can read back. It
// counts every level of the encoding, as the codec's reflection does; the
// generated codecs of the hot types (structs.generated.go) do not count
// the levels of the structs they decode, so the decoder reads a little
// deeper than CheckEntry accepts, never less deep.
func TestCheckEntryAgreesWithTheDecoder(t *testing.T) {
	cases := []struct {
		name     string
		depth    int
		accepted bool
		// decodable is whether the decoder reads it (nil: either way).
		decodable *bool
	}{
		{"a real config", 3, true, ptr(true)},
		{"deep but within the decoder's limit", structs.MaxDecodeDepth - 20, true, ptr(true)},
		{"just past CheckEntry's limit", structs.MaxDecodeDepth, false, nil},
		{"10,000 deep", 10_000, false, ptr(false)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := mock.Job()
			job.TaskGroups[0].Tasks[0].Config = nestedConfig(tc.depth)
			buf, err := structs.Encode(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
			if err != nil {
				t.Fatal(err)
			}
			var out structs.JobRegisterRequest
			decodeErr := structs.Decode(buf[1:], &out)
			if tc.decodable != nil && (decodeErr == nil) != *tc.decodable {
				t.Fatalf("decoder: %v, want decodable %v", decodeErr, *tc.decodable)
			}
			err = structs.CheckEntry(buf)
			if (err == nil) != tc.accepted {
				t.Fatalf("CheckEntry: %v, want accepted %v", err, tc.accepted)
			}
			if err == nil && decodeErr != nil {
				t.Fatalf("CheckEntry accepted an entry the decoder refuses: %v", decodeErr)
			}
			if err != nil && !structs.IsValidationError(err) {
				t.Fatalf("refusal is not a validation error: %v", err)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestCheckEntryOnEveryKindOfValue(t *testing.T) {
	alloc := mock.Alloc()
	plan := &structs.ApplyPlanResultsRequest{AllocUpdateRequest: structs.AllocUpdateRequest{Alloc: []*structs.Allocation{alloc}}}
	entries := map[string]interface{}{
		"job":          &structs.JobRegisterRequest{Job: mock.Job(), Eval: mock.Eval()},
		"plan results": plan,
		"node":         &structs.NodeRegisterRequest{Node: mock.Node()},
	}
	for name, msg := range entries {
		buf, err := structs.Encode(structs.JobRegisterRequestType, msg)
		if err != nil {
			t.Fatal(err)
		}
		if err := structs.CheckEntry(buf); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Every cut short encoding is named as such, never read past.
		for cut := 1; cut < len(buf)-1; cut += 7 {
			err := structs.CheckEntry(buf[:cut])
			if cut > 1 && err == nil {
				t.Fatalf("%s cut at %d of %d: accepted", name, cut, len(buf))
			}
			if err != nil && errors.Is(err, structs.ErrEntryTooDeep) {
				t.Fatalf("%s cut at %d: %v", name, cut, err)
			}
		}
	}
}

func BenchmarkCheckEntry(b *testing.B) {
	plan := &structs.ApplyPlanResultsRequest{}
	for range 100 {
		plan.Alloc = append(plan.Alloc, mock.Alloc())
	}
	buf, err := structs.Encode(structs.ApplyPlanResultsRequestType, plan)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if err := structs.CheckEntry(buf); err != nil {
			b.Fatal(err)
		}
	}
}
