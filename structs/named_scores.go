package structs

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// NamedScores is a node's score by scorer name, as NodeScoreMeta.Scores.
// It is a map on the wire and in the API (JSON and msgpack alike), but
// is held as a slice sorted by name: every stored allocation carries
// five of them, and a Go map of three entries takes about 250 bytes
// where this takes 80.
//
// Its encodings are those of a map[string]float64 with sorted keys,
// which is what encoding/json writes for a map and one of the orders the
// msgpack codec writes one in (it follows Go's map order, which varies),
// so every reader of the map form reads it unchanged. nil encodes as
// null (msgpack nil) and an empty non-nil value as {}, as a map does.
// Set keeps the order; a literal must be written in it (Get relies on
// it, and the encoders sort a copy of one that is not). Stored values
// are never changed; Set is for whoever builds one.
type NamedScores []NamedScore

// The scorers' names, as the scheduler reports them.
const (
	ScorerBinPack      = "binpack"
	ScorerAntiAffinity = "job-anti-affinity"
	ScorerPenalty      = "node-reschedule-penalty"
	ScorerAffinity     = "node-affinity"
	ScorerSpread       = "allocation-spread"
	ScorerPreemption   = "preemption"
)

// scorerName returns the scorer name b spells, without allocating when
// it is one of ours: every placement decoded carries fifteen of them.
func scorerName(b []byte) string {
	switch string(b) {
	case ScorerBinPack:
		return ScorerBinPack
	case ScorerAntiAffinity:
		return ScorerAntiAffinity
	case ScorerPenalty:
		return ScorerPenalty
	case ScorerAffinity:
		return ScorerAffinity
	case ScorerSpread:
		return ScorerSpread
	case ScorerPreemption:
		return ScorerPreemption
	}
	return string(b)
}

// NamedScore is one scorer's score.
type NamedScore struct {
	Name  string
	Score float64
}

// NamedScoresOf returns m's entries, sorted; nil for a nil map.
func NamedScoresOf(m map[string]float64) NamedScores {
	if m == nil {
		return nil
	}
	s := make(NamedScores, 0, len(m))
	for k, v := range m {
		s = append(s, NamedScore{k, v})
	}
	slices.SortFunc(s, func(a, b NamedScore) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// Map returns the scores as a map; nil for nil.
func (s NamedScores) Map() map[string]float64 {
	if s == nil {
		return nil
	}
	m := make(map[string]float64, len(s))
	for _, e := range s {
		m[e.Name] = e.Score
	}
	return m
}

func (s NamedScores) find(name string) (int, bool) {
	return slices.BinarySearchFunc(s, name, func(e NamedScore, n string) int { return strings.Compare(e.Name, n) })
}

// Get returns the score of name and whether there is one.
func (s NamedScores) Get(name string) (float64, bool) {
	if i, ok := s.find(name); ok {
		return s[i].Score, true
	}
	return 0, false
}

// Set sets the score of name, in its place by name.
func (s *NamedScores) Set(name string, score float64) {
	i, ok := s.find(name)
	if ok {
		(*s)[i].Score = score
		return
	}
	*s = slices.Insert(*s, i, NamedScore{name, score})
}

// ordered returns s if its names are strictly increasing, as Set keeps
// them; otherwise (a literal written out of order) a sorted copy in
// which a repeated name keeps its last score. The encoders write what
// it returns, so their output is a map's whatever s holds.
func (s NamedScores) ordered() NamedScores {
	for i := 1; i < len(s); i++ {
		if s[i-1].Name >= s[i].Name {
			o := make(NamedScores, 0, len(s))
			for _, e := range s {
				o.Set(e.Name, e.Score)
			}
			return o
		}
	}
	return s
}

// Copy returns a copy that shares nothing with s; nil stays nil and
// empty stays empty.
func (s NamedScores) Copy() NamedScores {
	if s == nil {
		return nil
	}
	return append(make(NamedScores, 0, len(s)), s...)
}

// Equal reports whether s and o hold the same scores. nil and empty are
// not equal, as their encodings differ.
func (s NamedScores) Equal(o NamedScores) bool {
	return (s == nil) == (o == nil) && slices.Equal(s, o)
}

// CodecEncodeSelf writes s as the msgpack codec writes a
// map[string]float64, keys sorted.
func (s NamedScores) CodecEncodeSelf(e *codec.Encoder) {
	z, r := codec.GenHelperEncoder(e)
	if s == nil {
		r.EncodeNil()
		return
	}
	raw := z.EncBasicHandle().StringToRaw
	s = s.ordered()
	r.WriteMapStart(len(s))
	for _, v := range s {
		r.WriteMapElemKey()
		if raw {
			r.EncodeStringBytesRaw(z.BytesView(v.Name))
		} else {
			r.EncodeStringEnc(codecUTF8, v.Name)
		}
		r.WriteMapElemValue()
		r.EncodeFloat64(v.Score)
	}
	r.WriteMapEnd()
}

// codecUTF8 is the codec's tag for UTF-8 strings, as its generated
// encoders name it.
const codecUTF8 = 1

// CodecDecodeSelf reads a map of scores in any key order. A name given
// twice keeps its last score, as a map would.
func (s *NamedScores) CodecDecodeSelf(d *codec.Decoder) {
	z, r := codec.GenHelperDecoder(d)
	if r.TryDecodeAsNil() {
		*s = nil
		return
	}
	n := r.ReadMapStart()
	out := make(NamedScores, 0, z.DecInferLen(n, z.DecBasicHandle().MaxInitLen, 24))
	for j := 0; (n >= 0 && j < n) || (n < 0 && !r.CheckBreak()); j++ {
		r.ReadMapElemKey()
		name := scorerName(r.DecodeStringAsBytes())
		r.ReadMapElemValue()
		var v float64
		if !r.TryDecodeAsNil() {
			v = r.DecodeFloat64()
		}
		// The codec writes a map in Go's map order: insert in place.
		out.Set(name, v)
	}
	r.ReadMapEnd()
	*s = out
}

// MarshalJSON writes s as encoding/json writes a map[string]float64:
// keys sorted, numbers formatted alike, NaN and infinities refused.
// Characters that encoding/json escapes only as HTML (<, >, &) are left
// to the encoder, which escapes them in a Marshaler's output as it does
// in a map's keys when (and only when) it is set to.
func (s NamedScores) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	s = s.ordered()
	b := make([]byte, 0, 2+len(s)*32)
	b = append(b, '{')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSONString(b, v.Name); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = appendJSONFloat(b, v.Score); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads a JSON object of numbers (or null).
func (s *NamedScores) UnmarshalJSON(data []byte) error {
	var m map[string]float64
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*s = NamedScoresOf(m)
	return nil
}

// appendJSONString appends str as a JSON string. Plain printable ASCII
// (the scorers' names) is written as is; anything else goes through
// encoding/json so that its escapes are exactly encoding/json's.
func appendJSONString(b []byte, str string) ([]byte, error) {
	plain := true
	for i := 0; i < len(str) && plain; i++ {
		c := str[i]
		plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\'
	}
	if plain {
		b = append(b, '"')
		b = append(b, str...)
		return append(b, '"'), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(str); err != nil {
		return nil, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// errUnsupportedFloat is encoding/json's refusal of NaN and infinities.
var errUnsupportedFloat = errors.New("json: unsupported value: NaN or infinity in scores")

// appendJSONFloat appends f formatted as encoding/json formats a float64:
// the shortest representation, in exponent form below 1e-6 or from 1e21
// on, with a two-digit negative exponent cut to one.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, errUnsupportedFloat
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-07 becomes e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
