package driver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DecodeConfig decodes a task's driver configuration into out, a pointer
// to a struct with `json` tags. Task configs arrive as generic maps whose
// numbers may be int64, uint64 or float64 depending on the codec that
// carried them; going through JSON normalises all of them. Keys that out
// does not declare are an error naming the key, so a typo in a job file
// fails the task instead of being silently ignored.
func DecodeConfig(raw map[string]interface{}, out interface{}) error {
	b, err := json.Marshal(raw)
	if err != nil {
		return fmt.Errorf("task config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("task config: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// Duration is a time.Duration that decodes from a Go duration string
// ("5s", "1m30s") or from a number of nanoseconds.
type Duration time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s == "" {
			*d = 0
			return nil
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("invalid duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	n, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("invalid duration %s", b)
	}
	*d = Duration(n)
	return nil
}

// MarshalJSON renders the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}
