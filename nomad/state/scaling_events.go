package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// Scaling events: one row per job, holding each task group's most recent
// scaling requests (structs.JobTrackedScalingEvents per group, newest
// first). The row goes with the job when the job is purged.

// TableScalingEvents holds structs.JobScalingEvents rows.
const TableScalingEvents = "scaling_event"

func scalingEventsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableScalingEvents,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(namespacedID(
				func(e *structs.JobScalingEvents) string { return e.Namespace },
				func(e *structs.JobScalingEvents) string { return e.JobID })),
		},
	}
}

func scalingEventsByJob(txn *memdb.Txn, ws memdb.WatchSet, namespace, jobID string) (*structs.JobScalingEvents, error) {
	raw, err := first(txn, ws, TableScalingEvents, indexID, namespace, jobID)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.JobScalingEvents), nil
}

// ScalingEventsByJob returns a job's scaling events per task group,
// newest first, and the index of their last change; nil and 0 when the
// job has none.
func (s *StateStore) ScalingEventsByJob(ws memdb.WatchSet, namespace, jobID string) (map[string][]*structs.ScalingEvent, uint64, error) {
	row, err := scalingEventsByJob(s.db.Txn(false), ws, namespace, jobID)
	if err != nil || row == nil {
		return nil, 0, err
	}
	return row.ScalingEvents, row.ModifyIndex, nil
}

// UpsertScalingEvent records a scaling event at index; see
// Txn.UpsertScalingEvent.
func (s *StateStore) UpsertScalingEvent(index uint64, req *structs.ScalingEventRequest) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertScalingEvent(req) })
}

// UpsertScalingEvent puts the request's event first in its task group's
// list, stamped with the transaction's index, and drops the oldest beyond
// structs.JobTrackedScalingEvents. The row is copied, never edited in
// place: readers may hold the old one.
func (tx *Txn) UpsertScalingEvent(req *structs.ScalingEventRequest) error {
	tx.touch(TableScalingEvents)
	if req == nil || req.ScalingEvent == nil {
		return fmt.Errorf("scaling event: no event")
	}
	if req.JobID == "" || req.TaskGroup == "" {
		return fmt.Errorf("scaling event: job and task group are required")
	}
	old, err := scalingEventsByJob(tx.txn, nil, req.Namespace, req.JobID)
	if err != nil {
		return err
	}
	row := &structs.JobScalingEvents{
		Namespace:     req.Namespace,
		JobID:         req.JobID,
		ScalingEvents: make(map[string][]*structs.ScalingEvent),
		ModifyIndex:   tx.index,
	}
	if old != nil {
		for g, evs := range old.ScalingEvents {
			row.ScalingEvents[g] = evs
		}
	}
	ev := *req.ScalingEvent
	ev.CreateIndex = tx.index
	prev := row.ScalingEvents[req.TaskGroup]
	n := min(len(prev), structs.JobTrackedScalingEvents-1)
	events := make([]*structs.ScalingEvent, 0, n+1)
	events = append(events, &ev)
	events = append(events, prev[:n]...)
	row.ScalingEvents[req.TaskGroup] = events
	if err := tx.insert(TableScalingEvents, row); err != nil {
		return fmt.Errorf("scaling events of job %q in namespace %q: %w", req.JobID, req.Namespace, err)
	}
	return nil
}

// deleteScalingEvents removes a job's scaling events, if any.
func (tx *Txn) deleteScalingEvents(namespace, jobID string) error {
	row, err := scalingEventsByJob(tx.txn, nil, namespace, jobID)
	if err != nil || row == nil {
		return err
	}
	if err := tx.delete(TableScalingEvents, row); err != nil {
		return fmt.Errorf("scaling events of job %q in namespace %q: %w", jobID, namespace, err)
	}
	return nil
}
