package agent

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/shoenig/test/must"
)

// A handler whose body is compressed already (a snapshot archive) is
// sent as it is, with its own Content-Length, even to a client that
// accepts gzip; every other answer is compressed for such a client.
func TestGzipHandler_SendUncompressed(t *testing.T) {
	body := "an archive, gzip already"
	for _, tc := range []struct {
		name         string
		uncompressed bool
		// wrap puts another writer between the gzip writer and the
		// handler, as middleware does.
		wrap       bool
		wantGzip   bool
		wantLength string
	}{
		{name: "compressed answer", wantGzip: true},
		{name: "sent as it is", uncompressed: true, wantLength: strconv.Itoa(len(body))},
		{name: "sent as it is through a wrapper", uncompressed: true, wrap: true, wantLength: strconv.Itoa(len(body))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := gzipHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.wrap {
					w = &unwrapper{ResponseWriter: w}
				}
				if tc.uncompressed {
					sendUncompressed(w)
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				w.WriteHeader(http.StatusOK)
				io.WriteString(w, body)
			}))
			req := httptest.NewRequest("GET", "/v1/operator/snapshot", nil)
			req.Header.Set("Accept-Encoding", "gzip")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			got := rec.Body.String()
			if tc.wantGzip {
				must.Eq(t, "gzip", rec.Header().Get("Content-Encoding"))
				zr, err := gzip.NewReader(rec.Body)
				must.NoError(t, err)
				b, err := io.ReadAll(zr)
				must.NoError(t, err)
				got = string(b)
			} else {
				must.Eq(t, "", rec.Header().Get("Content-Encoding"))
			}
			must.Eq(t, body, got)
			must.Eq(t, tc.wantLength, rec.Header().Get("Content-Length"))
		})
	}
}

// unwrapper is a middleware's writer around another.
type unwrapper struct{ http.ResponseWriter }

func (u *unwrapper) Unwrap() http.ResponseWriter { return u.ResponseWriter }
