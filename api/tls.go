package api

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
)

// Environment variables of the client's TLS, read by DefaultConfig.
const (
	EnvCACert        = "NOMAD_CACERT"
	EnvCAPath        = "NOMAD_CAPATH"
	EnvClientCert    = "NOMAD_CLIENT_CERT"
	EnvClientKey     = "NOMAD_CLIENT_KEY"
	EnvTLSServerName = "NOMAD_TLS_SERVER_NAME"
	EnvSkipVerify    = "NOMAD_SKIP_VERIFY"
)

// TLSConfig is how the client verifies the agent's HTTPS certificate and
// which certificate it presents when the agent asks for one
// (verify_https_client). Files are read when the client is built.
type TLSConfig struct {
	// CACert is a PEM file of the CA certificates that sign the agent's
	// certificate; CAPath a directory of such files; CACertPEM the same
	// in memory. The first one set is used; none means the system's roots.
	CACert    string
	CAPath    string
	CACertPEM []byte

	// ClientCert and ClientKey are PEM files of the certificate the client
	// presents; ClientCertPEM and ClientKeyPEM the same in memory. A
	// certificate needs its key: one without the other is an error.
	ClientCert    string
	ClientCertPEM []byte
	ClientKey     string
	ClientKeyPEM  []byte

	// TLSServerName is the name the agent's certificate must prove
	// instead of the address's host, e.g. "server.global.nomad" when
	// dialling an agent by IP.
	TLSServerName string

	// Insecure skips verifying the agent's certificate. For tests only:
	// it lets anyone in the middle read the token.
	Insecure bool
}

// Copy returns a copy of t (nil for nil).
func (t *TLSConfig) Copy() *TLSConfig {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// isZero reports whether t asks for nothing beyond Go's defaults.
func (t *TLSConfig) isZero() bool {
	return t == nil || (t.CACert == "" && t.CAPath == "" && len(t.CACertPEM) == 0 &&
		t.ClientCert == "" && len(t.ClientCertPEM) == 0 && t.ClientKey == "" && len(t.ClientKeyPEM) == 0 &&
		t.TLSServerName == "" && !t.Insecure)
}

// ConfigureTLS applies tlsConfig to httpClient's transport, which must be
// an *http.Transport (a nil one becomes a copy of http.DefaultTransport).
// It reads the certificate files now, so a wrong path is reported here
// and not at the first request.
func ConfigureTLS(httpClient *http.Client, tlsConfig *TLSConfig) error {
	if tlsConfig == nil {
		return nil
	}
	if httpClient == nil {
		return errors.New("configuring TLS: no HTTP client given")
	}
	if httpClient.Transport == nil {
		httpClient.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	tr, ok := httpClient.Transport.(*http.Transport)
	if !ok {
		return fmt.Errorf("configuring TLS: HTTP client's transport is a %T, not an *http.Transport", httpClient.Transport)
	}
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = &tls.Config{}
	}
	tc := tr.TLSClientConfig

	cert, haveCert, err := tlsConfig.clientCertificate()
	if err != nil {
		return err
	}
	if haveCert {
		tc.Certificates = []tls.Certificate{cert}
	}
	roots, err := tlsConfig.rootCAs()
	if err != nil {
		return err
	}
	if roots != nil {
		tc.RootCAs = roots
	}
	if tlsConfig.TLSServerName != "" {
		tc.ServerName = tlsConfig.TLSServerName
	}
	tc.InsecureSkipVerify = tlsConfig.Insecure
	return nil
}

// clientCertificate loads the client's certificate, if one is configured.
func (t *TLSConfig) clientCertificate() (tls.Certificate, bool, error) {
	switch {
	case t.ClientCert != "" || t.ClientKey != "":
		if t.ClientCert == "" || t.ClientKey == "" {
			return tls.Certificate{}, false, errors.New("both client cert and client key must be provided")
		}
		cert, err := tls.LoadX509KeyPair(t.ClientCert, t.ClientKey)
		if err != nil {
			return tls.Certificate{}, false, fmt.Errorf("loading client certificate %s: %w", t.ClientCert, err)
		}
		return cert, true, nil
	case len(t.ClientCertPEM) != 0 || len(t.ClientKeyPEM) != 0:
		if len(t.ClientCertPEM) == 0 || len(t.ClientKeyPEM) == 0 {
			return tls.Certificate{}, false, errors.New("both client cert and client key must be provided")
		}
		cert, err := tls.X509KeyPair(t.ClientCertPEM, t.ClientKeyPEM)
		if err != nil {
			return tls.Certificate{}, false, fmt.Errorf("loading client certificate: %w", err)
		}
		return cert, true, nil
	}
	return tls.Certificate{}, false, nil
}

// rootCAs builds the pool of CAs the agent's certificate is checked
// against; nil means the system's.
func (t *TLSConfig) rootCAs() (*x509.CertPool, error) {
	switch {
	case len(t.CACertPEM) != 0:
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(t.CACertPEM) {
			return nil, errors.New("CA certificate PEM holds no certificate")
		}
		return pool, nil
	case t.CACert != "":
		pool := x509.NewCertPool()
		if err := appendCAFile(pool, t.CACert); err != nil {
			return nil, err
		}
		return pool, nil
	case t.CAPath != "":
		return loadCAPath(t.CAPath)
	}
	return nil, nil
}

// loadCAPath reads every file under dir as PEM CA certificates. A file
// without one is an error: a typo'd bundle must not silently leave the
// pool short of the CA that signs the agent.
func loadCAPath(dir string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		return appendCAFile(pool, path)
	})
	if err != nil {
		return nil, fmt.Errorf("loading CA path %s: %w", dir, err)
	}
	return pool, nil
}

func appendCAFile(pool *x509.CertPool, path string) error {
	pem, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("loading CA file: %w", err)
	}
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("loading CA file %s: no PEM certificate found", path)
	}
	return nil
}
