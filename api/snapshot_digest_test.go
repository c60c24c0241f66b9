package api

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

func TestDigestReader(t *testing.T) {
	body := "an archive"
	s256 := sha256.Sum256([]byte(body))
	s512 := sha512.Sum512([]byte(body))
	cases := []struct {
		name    string
		digest  string
		body    string
		openErr bool
		readErr error
	}{
		{"sha-256 matches", "sha-256=" + base64.StdEncoding.EncodeToString(s256[:]), body, false, nil},
		{"sha-512 matches", "sha-512=" + base64.StdEncoding.EncodeToString(s512[:]), body, false, nil},
		{"cut short", "sha-256=" + base64.StdEncoding.EncodeToString(s256[:]), body[:4], false, ErrSnapshotDigest},
		{"no header", "", body, true, nil},
		{"no algorithm", "abc", body, true, nil},
		{"unknown algorithm", "md5=abc", body, true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := newDigestReader(io.NopCloser(strings.NewReader(tc.body)), tc.digest)
			if tc.openErr {
				must.Error(t, err)
				return
			}
			must.NoError(t, err)
			got, err := io.ReadAll(r)
			must.True(t, errors.Is(err, tc.readErr), must.Sprintf("%v", err))
			if tc.readErr == nil {
				must.Eq(t, tc.body, string(got))
			}
		})
	}
}
