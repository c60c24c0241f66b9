package ui_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserVariables: a variable created from the UI is stored with its
// items; it is listed and shown with its values hidden until asked;
// a save based on a stale read is refused (check-and-set) instead of
// overwriting a change made elsewhere; deleting removes it.
func TestBrowserVariables(t *testing.T) {
	findBrowser(t)
	d := startAgent(t)
	ctx := newBrowser(t, 1280, 900)
	const wait = 20 * time.Second

	run(t, ctx, wait,
		chromedp.Navigate(d.addr+"/ui/variables"),
		textContains("#vars-table", "No variables yet"),
		chromedp.Click(chromedp.CSS(`a[href="/ui/variables/new"]`)),
		chromedp.WaitVisible(chromedp.CSS("#var-path")),
		chromedp.SendKeys(chromedp.CSS("#var-path"), "app/config"),
		chromedp.SendKeys(chromedp.CSS("#var-key-0"), "user"),
		chromedp.SendKeys(chromedp.CSS("#var-value-0"), "admin"),
		chromedp.Click(chromedp.CSS("#var-save")),
		textContains("#var-status", "Saved at index"),
	)
	var v struct {
		Items       map[string]string
		ModifyIndex uint64
	}
	d.waitFor(t, "the variable stored", func() bool {
		return d.getJSON("/v1/var/app/config", &v) == nil && v.Items["user"] == "admin"
	})

	run(t, ctx, wait,
		chromedp.Navigate(d.addr+"/ui/variables"),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/ui/variables/app/config@default"]`)),
		chromedp.Click(chromedp.CSS(`a[href="/ui/variables/app/config@default"]`)),
		chromedp.WaitVisible(chromedp.CSS("#var-value-0")),
		waitJS(`document.querySelector("#var-value-0").type === "password"`),
		chromedp.Click(chromedp.CSS("#var-reveal")),
		waitJS(`document.querySelector("#var-value-0").type === "text" && document.querySelector("#var-value-0").value === "admin"`),
	)

	// Changed elsewhere after the page read it: the page's save is refused.
	d.send(t, "PUT", "/v1/var/app/config", map[string]any{"Path": "app/config", "Items": map[string]string{"user": "root"}})
	run(t, ctx, wait,
		chromedp.SendKeys(chromedp.CSS("#var-value-0"), "2"),
		chromedp.Click(chromedp.CSS("#var-save")),
		textContains("#var-status", "Someone changed this variable"),
	)
	d.waitFor(t, "the other change kept", func() bool {
		return d.getJSON("/v1/var/app/config", &v) == nil && v.Items["user"] == "root"
	})

	run(t, ctx, wait,
		chromedp.Navigate(d.addr+"/ui/variables/app/config@default"),
		chromedp.WaitVisible(chromedp.CSS("#var-delete")),
		chromedp.Click(chromedp.CSS("#var-delete")),
		waitJS(`location.pathname === "/ui/variables"`),
		textContains("#vars-table", "No variables yet"),
	)
	if errs := pageErrors.take(); len(errs) > 0 {
		t.Fatalf("script errors: %q", errs)
	}
}
