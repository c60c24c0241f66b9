package scheduler

import (
	"time"

	"github.com/opennomad/nomad/structs"
)

// disconnectExpired reports whether an alloc on a disconnected node has
// been unknown for longer than the group tolerates.
func (r *reconciler) disconnectExpired(a *structs.Allocation, tg *structs.TaskGroup) bool {
	if a.ClientStatus != structs.AllocClientStatusUnknown || tg.MaxClientDisconnect == nil {
		return false
	}
	since := time.Unix(0, a.ModifyTime)
	return !r.in.now.Before(since.Add(*tg.MaxClientDisconnect))
}

// markUnknown records that an alloc's node disconnected: the alloc turns
// unknown and a follow-up eval fires when its grace period ends.
func (r *reconciler) markUnknown(a *structs.Allocation, tg *structs.TaskGroup, du *structs.DesiredUpdates) {
	du.Disconnect++
	ev := r.followupEval(structs.EvalTriggerMaxDisconnectTimeout, r.in.now.Add(*tg.MaxClientDisconnect))
	ev.StatusDescription = ""
	r.result.followupEvals = append(r.result.followupEvals, ev)
	u := a.CopySkipJob()
	u.ClientStatus = structs.AllocClientStatusUnknown
	u.ClientDescription = structs.AllocUnknown
	u.FollowupEvalID = ev.ID
	r.result.attributeUpdates = append(r.result.attributeUpdates, u)
}
