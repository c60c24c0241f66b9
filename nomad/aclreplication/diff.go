package aclreplication

import (
	"bytes"
	"sort"
)

// diff compares the local copy with the authoritative list, both keyed by
// the object's key (a name or an ID) with its hash: upsert are the keys
// missing here or whose hash differs, remove the keys the authoritative
// region no longer has. Both come out sorted, so that writes are
// repeatable.
func diff(local, remote map[string][]byte) (upsert, remove []string) {
	for key, hash := range remote {
		if have, ok := local[key]; !ok || !bytes.Equal(have, hash) {
			upsert = append(upsert, key)
		}
	}
	for key := range local {
		if _, ok := remote[key]; !ok {
			remove = append(remove, key)
		}
	}
	sort.Strings(upsert)
	sort.Strings(remove)
	return upsert, remove
}
