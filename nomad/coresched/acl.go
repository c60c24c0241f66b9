package coresched

import (
	"errors"
	"fmt"

	"github.com/opennomad/nomad/structs"
)

// aclExpiredGC removes expired ACL tokens and one-time tokens. An expiry
// is a moment, not an age, so no threshold applies and forcing changes
// nothing. The server decides what has expired on its own clock
// (ACL.ReapExpired), so the call needs no token; with ACLs off there is
// nothing to do.
func (c *CoreScheduler) aclExpiredGC() error {
	var reply structs.GenericResponse
	err := c.rpc("ACL.ReapExpired", &structs.ACLReapExpiredRequest{}, &reply)
	if err != nil && !errors.Is(structs.KindOf(err), structs.ErrACLDisabled) {
		return fmt.Errorf("ACL expired token GC: %w", err)
	}
	return nil
}
