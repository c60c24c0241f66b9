package api

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
)

// ErrSnapshotDigest is a snapshot whose body does not match the Digest
// header it was sent with: it was cut short or damaged on the way.
var ErrSnapshotDigest = errors.New("snapshot does not match its digest")

// digestReader checks a body against an HTTP `Digest: <algo>=<base64>`
// header (sha-256 or sha-512) once it has been read to its end.
type digestReader struct {
	body io.ReadCloser
	hash hash.Hash
	want string
}

// newDigestReader wraps body; a header that is missing or malformed, or
// names another algorithm, is an error, as in Nomad's api package.
func newDigestReader(body io.ReadCloser, digest string) (io.ReadCloser, error) {
	algo, want, ok := strings.Cut(digest, "=")
	if !ok {
		return nil, fmt.Errorf("invalid digest format %q", digest)
	}
	var h hash.Hash
	switch algo {
	case "sha-256":
		h = sha256.New()
	case "sha-512":
		h = sha512.New()
	default:
		return nil, fmt.Errorf("unsupported digest algorithm %q", algo)
	}
	return &digestReader{body: body, hash: h, want: want}, nil
}

func (d *digestReader) Read(p []byte) (int, error) {
	n, err := d.body.Read(p)
	d.hash.Write(p[:n])
	if err == io.EOF && base64.StdEncoding.EncodeToString(d.hash.Sum(nil)) != d.want {
		return n, ErrSnapshotDigest
	}
	return n, err
}

func (d *digestReader) Close() error { return d.body.Close() }
