package structs_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/opennomad/nomad/structs"
)

// mapScoreMeta is NodeScoreMeta as it was, with its scores in a map: the
// form every reader of the API and of older Raft logs knows.
type mapScoreMeta struct {
	NodeID    string
	Scores    map[string]float64
	NormScore float64
}

func scoreCases() map[string]map[string]float64 {
	return map[string]map[string]float64{
		"nil":   nil,
		"empty": {},
		"one":   {"binpack": 0.8125},
		"many": {"binpack": 0.5371239019012, "job-anti-affinity": -0.25, "node-reschedule-penalty": -1,
			"node-affinity": 1, "allocation-spread": 0, "preemption": -0.0},
		"odd numbers": {"a": 1e-7, "b": 1e21, "c": -1e-300, "d": math.MaxFloat64, "e": math.SmallestNonzeroFloat64,
			"f": 123456789012345678, "g": 0.1, "h": 1e20, "i": -9.999999e-7},
		"odd names": {"<a&b>": 1, "é": 2, "\u2028\u2029": 3, "\x01\n\t": 4, "\xff": 5, `"\`: 6, "": 7, "A": 8, "a": 9},
	}
}

func newScoreMeta(m map[string]float64) (mapScoreMeta, structs.NodeScoreMeta) {
	return mapScoreMeta{NodeID: "node", Scores: m, NormScore: 0.5},
		structs.NodeScoreMeta{NodeID: "node", Scores: structs.NamedScoresOf(m), NormScore: 0.5}
}

// TestNamedScores_JSON: the API writes the same bytes as for a map, with
// and without HTML escaping, indented or not, and reads them back to the
// same scores.
func TestNamedScores_JSON(t *testing.T) {
	encodeAs := func(v any, html, indent bool) []byte {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if indent {
			enc.SetIndent("", "    ")
		}
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	encode := func(v any, html bool) []byte { return encodeAs(v, html, false) }
	for name, m := range scoreCases() {
		old, now := newScoreMeta(m)
		for _, html := range []bool{false, true} {
			for _, indent := range []bool{false, true} {
				want, got := encodeAs(old, html, indent), encodeAs(now, html, indent)
				if !bytes.Equal(want, got) {
					t.Errorf("%s (html %v, indent %v):\n got %s\nwant %s", name, html, indent, got, want)
				}
			}
		}
		// Read back as the map form reads the same bytes (JSON replaces
		// invalid UTF-8).
		var back structs.NodeScoreMeta
		var backMap mapScoreMeta
		if err := json.Unmarshal(encode(now, false), &back); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(encode(old, false), &backMap); err != nil {
			t.Fatal(err)
		}
		if !back.Scores.Equal(structs.NamedScoresOf(backMap.Scores)) {
			t.Errorf("%s: read back %#v, the map form %#v", name, back.Scores, backMap.Scores)
		}
	}
}

// TestNamedScores_JSONNumbers: numbers are formatted as encoding/json
// formats a float64, over a spread of magnitudes; NaN and infinities are
// refused, as for a map.
func TestNamedScores_JSONNumbers(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		m := map[string]float64{"s": f}
		want, _ := json.Marshal(m)
		got, err := json.Marshal(structs.NamedScoresOf(m))
		if err != nil || !bytes.Equal(want, got) {
			t.Fatalf("%v: got %s (%v), want %s", f, got, err, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := json.Marshal(structs.NamedScoresOf(map[string]float64{"s": f})); err == nil {
			t.Errorf("%v was encoded", f)
		}
	}
}

// sortedHandle is the Raft log's handle writing maps with sorted keys.
func sortedHandle() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.RawToString = true
	h.MapType = reflect.TypeOf(map[string]interface{}(nil))
	h.TypeInfos = codec.NewTypeInfos([]string{"codec"})
	h.Canonical = true
	return h
}

func msgpackOf(t *testing.T, h *codec.MsgpackHandle, v any) []byte {
	t.Helper()
	var b []byte
	if err := codec.NewEncoderBytes(&b, h).Encode(v); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNamedScores_Msgpack: the Raft log and RPCs carry the bytes of the
// map form with its keys sorted (the map form writes its keys in Go's
// map order, so sorted is one of the orders it writes), and each form
// reads the other's bytes, in any key order, to the same scores.
func TestNamedScores_Msgpack(t *testing.T) {
	for name, m := range scoreCases() {
		old, now := newScoreMeta(m)
		want := msgpackOf(t, sortedHandle(), old)
		got := msgpackOf(t, structs.MsgpackHandle, &now)
		if !bytes.Equal(want, got) {
			t.Errorf("%s:\n got %x\nwant %x", name, got, want)
		}
		// Through reflection (a type without a generated codec holding
		// one) the bytes are the same.
		wrapped := msgpackOf(t, structs.MsgpackHandle, struct{ M structs.NodeScoreMeta }{now})
		if !bytes.Equal(wrapped, msgpackOf(t, sortedHandle(), struct{ M mapScoreMeta }{old})) {
			t.Errorf("%s: wrapped encodings differ", name)
		}

		// The map form's own bytes, in whatever order it wrote them.
		for range 5 {
			var back structs.NodeScoreMeta
			if err := structs.Decode(msgpackOf(t, structs.MsgpackHandle, old), &back); err != nil {
				t.Fatal(err)
			}
			if !back.Scores.Equal(now.Scores) {
				t.Fatalf("%s: read %#v, want %#v", name, back.Scores, now.Scores)
			}
		}
		var back mapScoreMeta
		if err := structs.Decode(got, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, old) || (back.Scores == nil) != (m == nil) {
			t.Errorf("%s: the map form read %#v, want %#v", name, back, old)
		}
	}
}

// TestNamedScores_MsgpackRepeatedName: a name given twice keeps its last
// score, as a map decoding the same bytes does.
func TestNamedScores_MsgpackRepeatedName(t *testing.T) {
	one := msgpackOf(t, structs.MsgpackHandle, map[string]float64{"b": 1})
	two := msgpackOf(t, structs.MsgpackHandle, map[string]float64{"b": 2})
	three := msgpackOf(t, structs.MsgpackHandle, map[string]float64{"a": 3})
	// fixmap of 3: b=1, a=3, b=2
	buf := append([]byte{0x83}, one[1:]...)
	buf = append(buf, three[1:]...)
	buf = append(buf, two[1:]...)
	var m map[string]float64
	var s structs.NamedScores
	if err := structs.Decode(buf, &m); err != nil {
		t.Fatal(err)
	}
	if err := structs.Decode(buf, &s); err != nil {
		t.Fatal(err)
	}
	if !s.Equal(structs.NamedScoresOf(m)) || len(s) != 2 {
		t.Fatalf("got %#v, map reads %v", s, m)
	}
}

func TestNamedScores_GetSet(t *testing.T) {
	var s structs.NamedScores
	for _, e := range []structs.NamedScore{{"c", 3}, {"a", 1}, {"b", 2}, {"a", -1}} {
		s.Set(e.Name, e.Score)
	}
	want := structs.NamedScores{{"a", -1}, {"b", 2}, {"c", 3}}
	if !s.Equal(want) {
		t.Fatalf("got %v, want %v", s, want)
	}
	if v, ok := s.Get("b"); !ok || v != 2 {
		t.Errorf("Get(b) = %v, %v", v, ok)
	}
	if _, ok := s.Get("z"); ok {
		t.Error("Get(z) found a score")
	}
	if !reflect.DeepEqual(s.Map(), map[string]float64{"a": -1, "b": 2, "c": 3}) {
		t.Errorf("Map() = %v", s.Map())
	}
	if structs.NamedScores(nil).Map() != nil || structs.NamedScoresOf(nil) != nil {
		t.Error("nil did not stay nil")
	}
	if structs.NamedScores(nil).Equal(structs.NamedScores{}) {
		t.Error("nil and empty are equal")
	}
}

// TestNamedScores_ScorerNamesShared: a decoded scorer name of ours is the
// constant itself, not a copy; other names decode as given.
func TestNamedScores_ScorerNamesShared(t *testing.T) {
	b := msgpackOf(t, structs.MsgpackHandle, map[string]float64{structs.ScorerBinPack: 1, "custom": 2})
	var s structs.NamedScores
	if err := structs.Decode(b, &s); err != nil {
		t.Fatal(err)
	}
	if !s.Equal(structs.NamedScores{{Name: "binpack", Score: 1}, {Name: "custom", Score: 2}}) {
		t.Fatalf("decoded %v", s)
	}
	if unsafe.StringData(s[0].Name) != unsafe.StringData(structs.ScorerBinPack) {
		t.Error("binpack was decoded into a copy")
	}
}

// TestNamedScores_OutOfOrderLiteral: a list written out of order, or
// with a name twice, still encodes as the map it stands for.
func TestNamedScores_OutOfOrderLiteral(t *testing.T) {
	s := structs.NamedScores{{"c", 3}, {"a", 1}, {"c", 4}, {"b", 2}}
	m := map[string]float64{"a": 1, "b": 2, "c": 4}
	wantJSON, _ := json.Marshal(m)
	gotJSON, err := json.Marshal(s)
	if err != nil || !bytes.Equal(gotJSON, wantJSON) {
		t.Errorf("JSON %s (%v), want %s", gotJSON, err, wantJSON)
	}
	if got, want := msgpackOf(t, structs.MsgpackHandle, s), msgpackOf(t, sortedHandle(), m); !bytes.Equal(got, want) {
		t.Errorf("msgpack %x, want %x", got, want)
	}
}
