package structs_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// streamEntry is a Raft entry written the way entries were before they
// were encoded into a sized slice: the type byte, then an encoder over an
// io.Writer. Old logs hold these bytes; new entries must be the same.
func streamEntry(t *testing.T, typ structs.MessageType, msg any) []byte {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteByte(byte(typ))
	if err := codec.NewEncoder(&buf, structs.MsgpackHandle).Encode(msg); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// jobOfSize is a registration whose entry grows with n (bytes of one
// meta value), to move an entry type's size up and down. Maps of more
// than one key are left out: the codec writes them in Go's random map
// order, so two encodings of one value may differ.
func jobOfSize(n int) *structs.JobRegisterRequest {
	job := mock.Job()
	job.Meta = map[string]string{"size": strings.Repeat("x", n)}
	job.TaskGroups[0].Tasks[0].Config = map[string]any{"command": "/bin/sleep"}
	return &structs.JobRegisterRequest{Job: job, WriteRequest: structs.WriteRequest{Region: "global", Namespace: "default"}}
}

// TestEncode_SameBytesAsStream holds Encode to the stream encoder's bytes
// for entries of every size relation to the one before of their type:
// the first, equal, larger (the slice outgrown), much smaller (copied out
// of a mostly empty slice), and of other types in between.
func TestEncode_SameBytesAsStream(t *testing.T) {
	alloc := mock.Alloc()
	alloc.Job = jobOfSize(0).Job
	plan := &structs.ApplyPlanResultsRequest{AllocUpdateRequest: structs.AllocUpdateRequest{
		AllocsUpdated: []*structs.Allocation{alloc}, Job: alloc.Job}, EvalID: "e"}
	steps := []struct {
		typ structs.MessageType
		msg any
	}{
		{structs.JobRegisterRequestType, jobOfSize(0)},
		{structs.JobRegisterRequestType, jobOfSize(0)},
		{structs.JobRegisterRequestType, jobOfSize(10)},
		{structs.ApplyPlanResultsRequestType, plan},
		{structs.JobRegisterRequestType, jobOfSize(20000)},
		{structs.JobRegisterRequestType, jobOfSize(1)},
		{structs.JobRegisterRequestType, jobOfSize(3000)},
		{structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{mock.Eval()}}},
		{structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: "e"}},
		{structs.ApplyPlanResultsRequestType, plan},
	}
	for i, s := range steps {
		got, err := structs.Encode(s.typ, s.msg)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		want := streamEntry(t, s.typ, s.msg)
		if !bytes.Equal(got, want) {
			t.Fatalf("step %d (%s): %d bytes differ from the stream encoder's %d", i, s.typ, len(got), len(want))
		}
		if waste := cap(got) - len(got); waste > 4<<10 {
			t.Errorf("step %d (%s): %d bytes of capacity unused", i, s.typ, waste)
		}
	}
}

// TestEncode_EntriesAreTheCallers checks that an entry is never written
// again once returned: Raft keeps it while later entries are encoded,
// some at once on other goroutines.
func TestEncode_EntriesAreTheCallers(t *testing.T) {
	small, large := jobOfSize(0), jobOfSize(5000)
	first, err := structs.Encode(structs.JobRegisterRequestType, small)
	if err != nil {
		t.Fatal(err)
	}
	kept := bytes.Clone(first)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				msg := small
				if (g+i)%3 == 0 {
					msg = large
				}
				if _, err := structs.Encode(structs.JobRegisterRequestType, msg); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if !bytes.Equal(first, kept) {
		t.Fatal("an entry changed after it was returned")
	}
}

// TestEncode_AfterAFailure checks that a message the codec refuses fails
// alone: the next entry encodes as usual.
func TestEncode_AfterAFailure(t *testing.T) {
	// The handle does not write raw values: the codec stops part way.
	bad := []any{"a", codec.Raw{0xc0}}
	if _, err := structs.Encode(structs.JobRegisterRequestType, bad); err == nil {
		t.Fatal("a raw value encoded")
	}
	msg := jobOfSize(3)
	got, err := structs.Encode(structs.JobRegisterRequestType, msg)
	if err != nil {
		t.Fatal(err)
	}
	if want := streamEntry(t, structs.JobRegisterRequestType, msg); !bytes.Equal(got, want) {
		t.Fatal("the entry after a failure differs from the stream encoder's")
	}
}

// TestDecode_ReusedDecodersKeepNothing decodes with the pooled decoders
// in turn, a failure among them: a decoded value shares nothing with the
// bytes it came from or with a later decoding.
func TestDecode_ReusedDecodersKeepNothing(t *testing.T) {
	a, b := jobOfSize(40), jobOfSize(5)
	b.Job.ID = "other"
	bufA, err := structs.Encode(structs.JobRegisterRequestType, a)
	if err != nil {
		t.Fatal(err)
	}
	bufB, err := structs.Encode(structs.JobRegisterRequestType, b)
	if err != nil {
		t.Fatal(err)
	}
	var outA structs.JobRegisterRequest
	if err := structs.Decode(bufA[1:], &outA); err != nil {
		t.Fatal(err)
	}
	if err := structs.Decode(bufB[1:len(bufB)/2], new(structs.JobRegisterRequest)); err == nil {
		t.Fatal("half an entry decoded")
	}
	var outB structs.JobRegisterRequest
	if err := structs.Decode(bufB[1:], &outB); err != nil {
		t.Fatal(err)
	}
	for i := range bufA {
		bufA[i] = 0
	}
	if outA.Job.ID != a.Job.ID || outA.Job.Meta["size"] != a.Job.Meta["size"] || outB.Job.ID != "other" {
		t.Fatalf("decoded values changed: %q %q %q", outA.Job.ID, outA.Job.Meta["size"], outB.Job.ID)
	}
}
