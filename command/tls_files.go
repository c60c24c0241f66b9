package command

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/opennomad/nomad/tlsconf/certgen"
)

// writeNewPair writes a certificate and its key to two new files. Neither
// file may exist: a CA key overwritten by mistake cannot be recovered, and
// every certificate it signed would have to be replaced. Both are checked
// before either is written, so a refusal leaves nothing half done; keys
// are readable by their owner only.
func writeNewPair(certPath, keyPath string, pair certgen.PEMPair) error {
	for _, p := range []string{certPath, keyPath} {
		if _, err := os.Lstat(p); err == nil {
			return &fileExistsError{path: p}
		}
	}
	if err := writeNewFile(certPath, pair.Cert, 0o644); err != nil {
		return err
	}
	if err := writeNewFile(keyPath, pair.Key, 0o600); err != nil {
		// A certificate without its key is of no use; take it back.
		_ = os.Remove(certPath)
		return err
	}
	return nil
}

// writeNewFile creates path exclusively (O_EXCL holds the "never
// overwrite" promise even if the file appears after the check above).
func writeNewFile(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return &fileExistsError{path: path}
		}
		return fmt.Errorf("creating %q: %w", path, err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("writing %q: %w", path, err)
	}
	return nil
}

// fileExistsError refuses to replace a file; it is an fs.ErrExist.
type fileExistsError struct{ path string }

func (e *fileExistsError) Error() string {
	return fmt.Sprintf("%q already exists (files are never overwritten)", e.path)
}

func (e *fileExistsError) Unwrap() error { return fs.ErrExist }
