// Package ui is the web UI every agent serves at /ui/: hand-written HTML,
// CSS and JavaScript ES modules embedded in the binary, talking only to
// the public HTTP API (the same one the CLI and any client use).
//
// There is no JavaScript build step and no framework, on purpose: the
// project builds and tests with nothing but Go and make, the browser
// loads the modules as written (so what is reviewed is what runs), and
// the UI has one dependency only: the exec terminal's emulator,
// xterm.js, vendored as published under assets/vendor/xterm (its README
// says why, which version, and the checksums a test holds the files to).
// The pages are small functions that fetch JSON and build DOM nodes.
//
// Handler serves the files under assets/ at /ui/assets/ and the app
// shell (index.html) for every other /ui/ path, so that deep links such
// as /ui/jobs/example@default reach the client-side router.
package ui
