package command

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// redacted replaces a secret's value in a debug capture.
const redacted = "<redacted>"

// redactSecrets returns v (decoded JSON) with the values of secret keys
// replaced: tokens, secret IDs, passwords, the gossip encryption key and
// other keys. A bug report is shared; a secret in it would leak.
func redactSecrets(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			if s, ok := val.(string); ok && s != "" && secretKey(k) {
				out[k] = redacted
				continue
			}
			out[k] = redactSecrets(val)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = redactSecrets(val)
		}
		return out
	}
	return v
}

// secretKey reports whether a JSON key names a secret.
func secretKey(k string) bool {
	k = strings.ToLower(strings.ReplaceAll(k, "_", ""))
	for _, word := range []string{"token", "secret", "password", "encrypt"} {
		if strings.Contains(k, word) {
			return true
		}
	}
	return strings.HasSuffix(k, "key") && !strings.HasSuffix(k, "publickey")
}

// writeTarGz archives the directory dir (its base name as the top
// folder) into the gzip-compressed tar file path.
func writeTarGz(path, dir string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	root := filepath.Dir(dir)
	walkErr := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	for _, closeErr := range []error{tw.Close(), gz.Close(), f.Close()} {
		if walkErr == nil {
			walkErr = closeErr
		}
	}
	return walkErr
}
