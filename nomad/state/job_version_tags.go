package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// Version tags name job versions. A name is unique among the versions of
// one job; the tag lives on the version (and on the job itself while that
// version is current) and is no part of the specification.

// JobVersionByTagName returns the version of a job tagged name, or nil.
func (s *StateStore) JobVersionByTagName(ws memdb.WatchSet, namespace, id, name string) (*structs.Job, error) {
	return jobVersionByTagName(s.db.Txn(false), ws, namespace, id, name)
}

func jobVersionByTagName(txn *memdb.Txn, ws memdb.WatchSet, namespace, id, name string) (*structs.Job, error) {
	versions, err := jobVersions(txn, ws, namespace, id)
	if err != nil {
		return nil, err
	}
	for _, v := range versions {
		if v.VersionTag != nil && v.VersionTag.Name == name {
			return v, nil
		}
	}
	return nil, nil
}

// UpdateJobVersionTag applies or removes a version tag at index; see
// Txn.UpdateJobVersionTag.
func (s *StateStore) UpdateJobVersionTag(index uint64, namespace string, req *structs.JobApplyTagRequest) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpdateJobVersionTag(namespace, req) })
}

// UpdateJobVersionTag tags req.Version of the job with req.Tag, replacing
// the version's previous tag, or, with req.Tag nil, removes the tag named
// req.Name from the version holding it; an untagged version beyond the
// tracked count is then dropped like any old version. A missing version
// or tag is of kind structs.ErrNotFound; a name already on another
// version of the job, of kind structs.ErrConflict.
func (tx *Txn) UpdateJobVersionTag(namespace string, req *structs.JobApplyTagRequest) error {
	tx.touch(TableJobVersion)
	if req.Tag == nil {
		v, err := jobVersionByTagName(tx.txn, nil, namespace, req.JobID, req.Name)
		if err != nil {
			return err
		}
		if v == nil {
			return structs.KindErrorf(structs.ErrNotFound, "tag %q not found on job %q", req.Name, req.JobID)
		}
		if err := tx.setVersionTag(v, nil); err != nil {
			return err
		}
		return tx.trimJobVersions(namespace, req.JobID)
	}
	v, err := jobByIDAndVersion(tx.txn, nil, namespace, req.JobID, req.Version)
	if err != nil {
		return err
	}
	if v == nil {
		return structs.KindErrorf(structs.ErrNotFound, "job %q version %d not found", req.JobID, req.Version)
	}
	holder, err := jobVersionByTagName(tx.txn, nil, namespace, req.JobID, req.Tag.Name)
	if err != nil {
		return err
	}
	if holder != nil && holder.Version != v.Version {
		return structs.KindErrorf(structs.ErrConflict, "tag %q already exists on a different version of job %q",
			req.Tag.Name, req.JobID)
	}
	return tx.setVersionTag(v, req.Tag.Copy())
}

// setVersionTag writes a copy of version v with tag, and of the job too
// while v is its current version. JobModifyIndex stays: the specification
// did not change.
func (tx *Txn) setVersionTag(v *structs.Job, tag *structs.JobVersionTag) error {
	nv := *v
	nv.VersionTag = tag
	nv.ModifyIndex = tx.index
	if err := tx.insert(TableJobVersion, &nv); err != nil {
		return fmt.Errorf("job %q version %d: %w", v.ID, v.Version, err)
	}
	cur, err := jobByID(tx.txn, nil, v.Namespace, v.ID)
	if err != nil {
		return err
	}
	if cur != nil && cur.Version == v.Version && cur.CreateIndex == v.CreateIndex {
		nc := *cur
		nc.VersionTag = tag
		nc.ModifyIndex = tx.index
		if err := tx.insert(TableJobs, &nc); err != nil {
			return fmt.Errorf("job %q: %w", v.ID, err)
		}
	}
	return nil
}
