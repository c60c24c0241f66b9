package ui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/opennomad/nomad/command/agent"
)

// TestBrowserACL: with ACLs on, the UI without a token is refused with a
// link to sign in; a wrong secret is refused at sign-in with the
// server's answer; the right one shows what it is, the jobs appear and
// the header names the token; the namespace filter offers every
// namespace, with or without jobs; the exec terminal works with the
// token; signing out refuses again.
func TestBrowserACL(t *testing.T) {
	findBrowser(t)
	d := startAgent(t, func(c *agent.Config) { c.ACL.Enabled = true })
	ctx := newBrowser(t, 1280, 900)
	const wait = 20 * time.Second

	d.runHCL(t, sleepJob("secret-web", 1, 100, 64))
	d.send(t, "PUT", "/v1/namespace/prod", map[string]any{"Name": "prod", "Description": "production"})

	run(t, ctx, wait,
		chromedp.Navigate(d.addr+"/ui/jobs"),
		textContains("#jobs-table", "Permission denied"),
		chromedp.Click(chromedp.CSS("#jobs-table a.sign-in")),
		chromedp.WaitVisible(chromedp.CSS("#token-secret")),
		textContains("#token-status", "Not signed in"),

		chromedp.SendKeys(chromedp.CSS("#token-secret"), "11111111-2222-4333-8444-555555555555"),
		chromedp.Click(chromedp.CSS("#token-sign-in")),
		textContains("#token-status", "Permission denied"),

		waitJS(`(document.querySelector('#token-secret').value = '') === ''`),
		chromedp.SendKeys(chromedp.CSS("#token-secret"), d.token),
		chromedp.Click(chromedp.CSS("#token-sign-in")),
		textContains("#token-status", "Signed in as"),
		textContains("#token-status", "management"),
		textContains("#token-link", "Bootstrap Token"),

		chromedp.Navigate(d.addr+"/ui/jobs"),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/ui/jobs/secret-web@default"]`)),
		waitJS(`[...document.querySelectorAll('#f-namespace option')].some((o) => o.value === 'prod')`),
	)

	// The secret is kept by the browser, never put in an address.
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string]("location.href"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(href, d.token) {
		t.Fatalf("the token is in the address %s", href)
	}

	// The exec terminal passes the token in its first frame (a browser's
	// websocket carries no header).
	var allocs []map[string]any
	d.waitFor(t, "secret-web running", func() bool {
		return d.getJSON("/v1/job/secret-web/allocations", &allocs) == nil && len(allocs) == 1 && allocs[0]["ClientStatus"] == "running"
	})
	run(t, ctx, wait,
		chromedp.Navigate(d.addr+"/ui/allocations/"+allocs[0]["ID"].(string)),
		chromedp.WaitVisible(chromedp.CSS("#exec-connect")),
		chromedp.SetValue(chromedp.CSS("#exec-command"), `/bin/sh -c "echo acl-$((2+2))"`),
		chromedp.Click(chromedp.CSS("#exec-connect")),
		textContains("#exec-status", "Exited with code 0"),
		textContains("#exec-terminal .xterm-rows", "acl-4"),
	)

	run(t, ctx, wait,
		chromedp.Navigate(d.addr+"/ui/settings/tokens"),
		chromedp.WaitVisible(chromedp.CSS("#token-sign-out")),
		chromedp.Click(chromedp.CSS("#token-sign-out")),
		textContains("#token-status", "Not signed in"),
		textContains("#token-link", "Sign in"),
		chromedp.Navigate(d.addr+"/ui/jobs"),
		textContains("#jobs-table", "Permission denied"),
	)
	if errs := pageErrors.take(); len(errs) > 0 {
		t.Fatalf("script errors: %q", errs)
	}
}
