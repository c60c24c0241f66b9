package agent

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hashicorp/cli"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/tlsconf/tlsconftest"
)

// httpsClient trusts ca and presents pair when it has files.
func httpsClient(t *testing.T, ca *tlsconftest.CA, pair *tlsconftest.Pair) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	cfg := &tls.Config{RootCAs: pool}
	if pair != nil {
		cert, err := tls.LoadX509KeyPair(pair.CertFile, pair.KeyFile)
		must.NoError(t, err)
		cfg.Certificates = []tls.Certificate{cert}
	}
	tr := &http.Transport{TLSClientConfig: cfg}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// get fetches url and returns the status and the serial number of the
// certificate the server presented.
func get(c *http.Client, url string) (int, *big.Int, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.TLS.PeerCertificates[0].SerialNumber, nil
}

// tls.http serves the API over HTTPS; verify_https_client requires a
// client certificate the CA signed.
func TestAgent_HTTPS(t *testing.T) {
	ca, other := tlsconftest.NewCA(t), tlsconftest.NewCA(t)
	srv := ca.Server(t, "global")
	cli := ca.Issue(t, "cli.global.nomad")
	foreign := other.Issue(t, "cli.global.nomad")
	for _, verify := range []bool{false, true} {
		t.Run(fmt.Sprintf("verify_https_client=%v", verify), func(t *testing.T) {
			cfg := devConfig(t)
			cfg.TLS.HTTP = true
			cfg.TLS.CAFile, cfg.TLS.CertFile, cfg.TLS.KeyFile = ca.File, srv.CertFile, srv.KeyFile
			cfg.TLS.VerifyHTTPSClient = verify
			a, err := newAgent(cfg, io.Discard, func(a *Agent) (serverBackend, error) { return newTestBackend(t, a), nil })
			must.NoError(t, err)
			defer a.Shutdown()
			url := "https://" + a.HTTPAddr() + "/v1/agent/health"

			code, serial, err := get(httpsClient(t, ca, &cli), url)
			must.NoError(t, err)
			must.Eq(t, http.StatusOK, code)
			must.Eq(t, srv.Cert.SerialNumber, serial)

			_, _, err = get(httpsClient(t, ca, nil), url)
			if verify {
				must.Error(t, err, must.Sprint("a client without a certificate is refused"))
			} else {
				must.NoError(t, err)
			}
			_, _, err = get(httpsClient(t, ca, &foreign), url)
			if verify {
				must.Error(t, err, must.Sprint("a certificate of another CA is refused"))
			} else {
				must.NoError(t, err, must.Sprint("without verify_https_client the client's certificate is not asked for"))
			}

			// Plain HTTP gets no API answer.
			resp, err := http.Get("http://" + a.HTTPAddr() + "/v1/agent/health")
			must.NoError(t, err)
			resp.Body.Close()
			must.Eq(t, http.StatusBadRequest, resp.StatusCode)
		})
	}
}

// SIGHUP re-reads the certificate files: new connections get the new
// certificate, a connection open before keeps working.
func TestCommand_SIGHUPReloadsCertificates(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	srv := ca.Server(t, "global")
	dir := writeFiles(t, map[string]string{"a.hcl": fmt.Sprintf(
		"ports {\n  http = 0\n}\ntls {\n  http = true\n  ca_file = %q\n  cert_file = %q\n  key_file = %q\n}\n",
		ca.File, srv.CertFile, srv.KeyFile)})
	started := make(chan *Agent, 1)
	reloads := make(chan error, 1)
	cmd := &Command{
		Ui:          cli.NewMockUi(),
		LogOutput:   io.Discard,
		signals:     make(chan os.Signal, 2),
		reloaded:    func(err error) { reloads <- err },
		started:     func(a *Agent) { started <- a },
		startServer: func(a *Agent) (serverBackend, error) { return newTestBackend(t, a), nil },
	}
	code := make(chan int, 1)
	go func() { code <- cmd.Run([]string{"-dev", "-config", filepath.Join(dir, "a.hcl")}) }()
	a := <-started
	url := "https://" + a.HTTPAddr() + "/v1/agent/health"

	old := httpsClient(t, ca, nil)
	_, serial, err := get(old, url)
	must.NoError(t, err)
	must.Eq(t, srv.Cert.SerialNumber, serial)

	fresh := ca.Server(t, "global")
	fresh.CopyTo(t, srv)
	cmd.signals <- syscall.SIGHUP
	must.NoError(t, <-reloads)

	_, serial, err = get(httpsClient(t, ca, nil), url)
	must.NoError(t, err)
	must.Eq(t, fresh.Cert.SerialNumber, serial, must.Sprint("a new connection sees the new certificate"))
	_, serial, err = get(old, url)
	must.NoError(t, err)
	must.Eq(t, srv.Cert.SerialNumber, serial, must.Sprint("the kept-alive connection still works, on its old handshake"))

	cmd.signals <- syscall.SIGTERM
	must.Eq(t, 0, <-code)
}

// Turning TLS on or off waits for a restart; a reload whose files do not
// load is refused and the certificate in use kept.
func TestAgent_ReloadTLSLimits(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	srv := ca.Server(t, "global")
	cfg := devConfig(t)
	cfg.TLS.HTTP = true
	cfg.TLS.CAFile, cfg.TLS.CertFile, cfg.TLS.KeyFile = ca.File, srv.CertFile, srv.KeyFile
	logs := &syncBuffer{}
	a, err := newAgent(cfg, logs, func(a *Agent) (serverBackend, error) { return newTestBackend(t, a), nil })
	must.NoError(t, err)
	defer a.Shutdown()
	url := "https://" + a.HTTPAddr() + "/v1/agent/health"

	next := *cfg
	next.TLS.HTTP, next.TLS.RPC = false, true
	must.NoError(t, a.Reload(&next))
	must.StrContains(t, logs.String(), "configuration change needs a restart to take effect: key=tls.http")
	must.StrContains(t, logs.String(), "key=tls.rpc")
	must.True(t, a.Config().TLS.HTTP)
	must.False(t, a.Config().TLS.RPC)

	broken := *cfg
	broken.TLS.KeyFile = filepath.Join(t.TempDir(), "gone.pem")
	must.ErrorContains(t, a.Reload(&broken), "tls.key_file")
	_, serial, err := get(httpsClient(t, ca, nil), url)
	must.NoError(t, err)
	must.Eq(t, srv.Cert.SerialNumber, serial)
}
