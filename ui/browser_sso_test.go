package ui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	capoidc "github.com/hashicorp/cap/oidc"

	"github.com/opennomad/nomad/command/agent"
)

// TestBrowserOIDCSignIn: the token page offers a button per OIDC auth
// method; it sends the browser to the provider (cap's in-process one, in
// its interactive mode: a login form), which sends it back to the token
// page; the page completes the login and is signed in with the token the
// binding rules earned, with nothing of the login left in the address.
func TestBrowserOIDCSignIn(t *testing.T) {
	findBrowser(t)
	d := startAgent(t, func(c *agent.Config) { c.ACL.Enabled = true })
	ctx := newBrowser(t, 1280, 900)
	const wait = 20 * time.Second

	redirect := d.addr + "/ui/settings/tokens"
	tp := capoidc.StartTestProvider(t, capoidc.WithNoTLS())
	tp.SetClientCreds("nomad-ui", "ui-secret")
	tp.SetAllowedRedirectURIs([]string{redirect})
	tp.SetSubjectInfo(map[string]*capoidc.TestSubject{
		"alice": {Password: "wonderland", CustomClaims: map[string]interface{}{"groups": []interface{}{"eng"}}},
	})

	d.send(t, "PUT", "/v1/acl/policy/readonly", map[string]any{"Name": "readonly",
		"Rules": `namespace "default" { policy = "read" }`})
	d.send(t, "PUT", "/v1/acl/auth-method", map[string]any{"Name": "corp", "Type": "OIDC", "TokenLocality": "local",
		"MaxTokenTTL": "1h", "Config": map[string]any{"OIDCDiscoveryURL": tp.Addr(), "OIDCClientID": "nomad-ui",
			"OIDCClientSecret": "ui-secret", "SigningAlgs": []string{"ES256"}, "AllowedRedirectURIs": []string{redirect},
			"BoundAudiences": []string{"nomad-ui"}, "OIDCDisableUserInfo": true,
			"ListClaimMappings": map[string]string{"groups": "groups"}}})
	d.send(t, "PUT", "/v1/acl/binding-rule", map[string]any{"AuthMethod": "corp", "Selector": `"eng" in list.groups`,
		"BindType": "policy", "BindName": "readonly"})

	run(t, ctx, wait,
		chromedp.Navigate(d.addr+"/ui/settings/tokens"),
		textContains("#token-status", "Not signed in"),
		textContains("#token-sso", "Sign in with corp"),
		chromedp.Click(chromedp.CSS(`button.sso-sign-in[data-method="corp"]`)),
		chromedp.WaitVisible(chromedp.CSS("#username")),
		chromedp.SendKeys(chromedp.CSS("#username"), "alice"),
		chromedp.SendKeys(chromedp.CSS("#password"), "wonderland"),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		textContains("#token-status", "Signed in as"),
		textContains("#token-status", "OIDC-corp"),
		textContains("#token-status", "readonly"),
		textContains("#token-link", "OIDC-corp"),
	)
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string]("location.href"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(href, "code=") || strings.Contains(href, "state=") {
		t.Fatalf("the login is left in the address %s", href)
	}
}
