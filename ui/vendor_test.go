package ui

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// The vendored files are the published packages' own: each matches the
// checksum its README records, so that an edit to them cannot pass
// unnoticed as the library.
func TestVendoredFilesMatchTheirChecksums(t *testing.T) {
	const dir = "assets/vendor/xterm/"
	readme, err := assets.ReadFile(dir + "README.md")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, line := range strings.Split(string(readme), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 3 || len(cells[2]) != 64 {
			continue
		}
		data, err := assets.ReadFile(dir + cells[0])
		if err != nil {
			t.Errorf("%s: %v", cells[0], err)
			continue
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != cells[2] {
			t.Errorf("%s: sha256 %s, the README records %s", cells[0], got, cells[2])
		}
		checked++
	}
	if checked != 5 {
		t.Fatalf("checked %d vendored files, want 5 (the README's table)", checked)
	}
}
