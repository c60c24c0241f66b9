//go:build unix

package executor

import (
	"fmt"
	"os"
	"os/user"
	"strconv"

	"github.com/opennomad/nomad/client/driver"
)

// LookupCredential resolves a user name (or numeric uid) to the identity
// a task runs as, with its supplementary groups.
func LookupCredential(name string) (*Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if _, nerr := strconv.Atoi(name); nerr == nil {
			u, err = user.LookupId(name)
		}
		if err != nil {
			return nil, fmt.Errorf("user %q: %w", name, err)
		}
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %q: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %q: gid %q: %w", name, u.Gid, err)
	}
	c := &Credential{UID: uint32(uid), GID: uint32(gid)}
	if ids, err := u.GroupIds(); err == nil {
		for _, g := range ids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil {
				c.Groups = append(c.Groups, uint32(n))
			}
		}
	}
	return c, nil
}

// GiveTaskDirs hands the task's own directories (local/, secrets/) to the
// user it runs as, so a task that is not root can write its files.
func GiveTaskDirs(cfg *driver.TaskConfig, c *Credential) error {
	for _, dir := range []string{cfg.Dirs.LocalDir, cfg.Dirs.SecretsDir} {
		if dir == "" {
			continue
		}
		if err := os.Chown(dir, int(c.UID), int(c.GID)); err != nil {
			return fmt.Errorf("giving %s to uid %d: %w", dir, c.UID, err)
		}
	}
	return nil
}

// SelfPath is the binary run as supervisor when a driver is not told
// otherwise: the running binary, which calls Init in main.
func SelfPath() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locating the executor binary: %w", err)
	}
	return p, nil
}
