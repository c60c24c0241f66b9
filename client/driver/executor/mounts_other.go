//go:build unix && !linux

package executor

import "errors"

// enterTaskMounts refuses mounts where there are no mount namespaces.
func enterTaskMounts(spec *Spec) error {
	if len(spec.Mounts) == 0 {
		return nil
	}
	return errors.New("host volume mounts need Linux")
}
