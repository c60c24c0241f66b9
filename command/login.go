package command

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/opennomad/nomad/api"
)

// LoginCommand is `nomad login`: it trades a credential from an identity
// provider for a Nomad token, through an auth method. A JWT method takes
// the token given with -login-token; an OIDC method sends the user's
// browser to the provider and waits on a local callback address for the
// provider to send it back.
type LoginCommand struct {
	Meta
}

// defaultOIDCCallbackAddr is where `nomad login` listens for the OIDC
// provider's redirect, as Nomad's CLI does; an OIDC method must allow
// http://<addr>/oidc/callback as a redirect URI.
const defaultOIDCCallbackAddr = "localhost:4649"

// openURL opens a URL in the user's browser. Tests replace it with a
// browser of their own.
var openURL = openInBrowser

// Help implements cli.Command.
func (c *LoginCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad login [options]

  Log in through an ACL auth method: the credentials of an identity
  provider are exchanged for a new Nomad ACL token, which is printed.
  With an OIDC method a browser is opened at the provider's login page;
  with a JWT method the provider's token is given with -login-token.

` + generalOptionsUsage() + `

Login Options:

  -method <name>
    The auth method to log in through. Without it, the cluster's default
    auth method is used.

  -type <OIDC|JWT>
    The type of the auth method. Without it, the method's own type is
    used.

  -oidc-callback-addr <host:port>
    The address the OIDC provider sends the browser back to, which this
    command listens on. The auth method must allow
    http://<address>/oidc/callback as a redirect URI. Defaults to
    "` + defaultOIDCCallbackAddr + `".

  -login-token <jwt>
    The token a JWT auth method's provider issued, exchanged for a Nomad
    token. Required for a JWT method.

  -json
    Output the ACL token in its JSON format.

  -t <template>
    Format the ACL token with a Go template.
`)
}

// Synopsis implements cli.Command.
func (c *LoginCommand) Synopsis() string { return "Login to Nomad using an auth method" }

// Run implements cli.Command.
func (c *LoginCommand) Run(args []string) int {
	var method, typ, callbackAddr, loginToken, tmpl string
	var asJSON bool
	fs := c.flagSet("login", flagsClient)
	fs.StringVar(&method, "method", "", "")
	fs.StringVar(&typ, "type", "", "")
	fs.StringVar(&callbackAddr, "oidc-callback-addr", defaultOIDCCallbackAddr, "")
	fs.StringVar(&loginToken, "login-token", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	method, typ, err := c.resolveMethod(client, method, strings.ToUpper(typ))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	var tok *api.ACLToken
	switch typ {
	case "JWT":
		if loginToken == "" {
			c.Ui.Error("You need to provide a login token with -login-token to log in through a JWT auth method.")
			return 1
		}
		tok, _, err = client.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: method, LoginToken: loginToken}, c.write())
	case "OIDC":
		tok, err = c.oidcLogin(client, method, callbackAddr)
	default:
		c.Ui.Error(fmt.Sprintf("Unsupported auth method type %q: must be OIDC or JWT", typ))
		return 1
	}
	if c.callFailed(err, "logging in") {
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, tok, asJSON, tmpl)
	}
	c.Ui.Output(fmt.Sprintf("Successfully logged in via %s and %s\n", typ, method))
	c.Ui.Output(formatACLToken(tok))
	return 0
}

// resolveMethod completes the method and type of a login from the
// cluster's auth methods: the default method when none is named, the
// named method's type when none is given.
func (c *LoginCommand) resolveMethod(client *api.Client, method, typ string) (string, string, error) {
	if method != "" && typ != "" {
		return method, typ, nil
	}
	methods, _, err := client.ACLAuthMethods().List(c.query())
	if err != nil {
		return "", "", fmt.Errorf("Error listing auth methods: %s", c.describe(err))
	}
	for _, m := range methods {
		if (method == "" && m.Default) || (method != "" && m.Name == method) {
			if typ == "" {
				typ = strings.ToUpper(m.Type)
			}
			return m.Name, typ, nil
		}
	}
	if method == "" {
		return "", "", errors.New("Must specify an auth method name with -method: the cluster has no default auth method")
	}
	return "", "", fmt.Errorf("Error: auth method %q not found", method)
}

// oidcLogin runs an OIDC login: a callback server on callbackAddr, the
// provider's URL opened (and printed, should no browser open), then the
// provider's redirect awaited and completed. An interrupt ends the wait.
func (c *LoginCommand) oidcLogin(client *api.Client, method, callbackAddr string) (*api.ACLToken, error) {
	nonce, err := newClientNonce()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", callbackAddr)
	if err != nil {
		return nil, fmt.Errorf("listening for the OIDC callback on %s: %w", callbackAddr, err)
	}
	redirectURI := "http://" + callbackAddr + "/oidc/callback"
	callbacks := make(chan oidcCallback, 1)
	srv := &http.Server{Handler: oidcCallbackHandler(callbacks), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()

	resp, _, err := client.ACLAuth().GetAuthURL(&api.ACLOIDCAuthURLRequest{AuthMethodName: method,
		RedirectURI: redirectURI, ClientNonce: nonce}, c.write())
	if err != nil {
		return nil, err
	}
	c.Ui.Output(fmt.Sprintf("Complete the login via your OIDC provider. Launching browser to:\n\n    %s\n", resp.AuthURL))
	if err := openURL(resp.AuthURL); err != nil {
		c.Ui.Output("Could not open a browser: open the URL above yourself.\n")
	}

	var cb oidcCallback
	select {
	case cb = <-callbacks:
	case <-c.ctx().Done():
		return nil, c.ctx().Err()
	}
	if cb.err != "" {
		return nil, fmt.Errorf("the OIDC provider refused the login: %s", cb.err)
	}
	tok, _, err := client.ACLAuth().CompleteAuth(&api.ACLOIDCCompleteAuthRequest{AuthMethodName: method,
		ClientNonce: nonce, State: cb.state, Code: cb.code, RedirectURI: redirectURI}, c.write())
	return tok, err
}

// oidcCallback is what the provider sent the browser back with.
type oidcCallback struct {
	state, code, err string
}

// oidcCallbackHandler answers the browser at /oidc/callback and hands the
// first callback to callbacks.
func oidcCallbackHandler(callbacks chan<- oidcCallback) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/oidc/callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		cb := oidcCallback{state: q.Get("state"), code: q.Get("code"), err: q.Get("error")}
		if d := q.Get("error_description"); d != "" {
			cb.err += ": " + d
		}
		msg := "Signed in via your OIDC provider. You can close this window and return to the terminal."
		if cb.err != "" {
			msg = "The OIDC provider refused the login: " + cb.err
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!DOCTYPE html><html><body><p>%s</p></body></html>", html.EscapeString(msg))
		select {
		case callbacks <- cb:
		default: // a login completes once; later visits change nothing
		}
	})
	return mux
}

// newClientNonce is a random secret that ties the two steps of an OIDC
// login to this command.
func newClientNonce() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// openInBrowser asks the desktop to open url.
func openInBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
