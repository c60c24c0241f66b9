#!/bin/sh
# Prints the path of a Chromium (or Chrome) for the web UI's browser
# tests and screenshots. When none is found and we are root on a Debian
# or Ubuntu machine, installs the `chromium` package; otherwise fails
# saying what to do. NOMAD_UI_BROWSER, when set, names the browser.
set -u

if [ -n "${NOMAD_UI_BROWSER:-}" ]; then
	if [ -x "$NOMAD_UI_BROWSER" ]; then
		echo "$NOMAD_UI_BROWSER"
		exit 0
	fi
	echo "error: NOMAD_UI_BROWSER=$NOMAD_UI_BROWSER is not an executable" >&2
	exit 1
fi

find_browser() {
	for name in chromium chromium-browser google-chrome google-chrome-stable; do
		if path=$(command -v "$name" 2>/dev/null); then
			echo "$path"
			return 0
		fi
	done
	return 1
}

if find_browser; then
	exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "The web UI tests need Chromium; installing it: apt-get install -y chromium" >&2
	if apt-get install -y -q chromium >&2 || { apt-get update -q >&2 && apt-get install -y -q chromium >&2; }; then
		if find_browser; then
			exit 0
		fi
	fi
fi

cat >&2 <<'MSG'
error: the web UI tests drive a headless Chromium, and none was found.
Install it (Debian/Ubuntu: sudo apt-get install chromium; Fedora: sudo dnf
install chromium; macOS: install Google Chrome) or set NOMAD_UI_BROWSER to
the path of a Chromium or Chrome binary, then run make again.
MSG
exit 1
