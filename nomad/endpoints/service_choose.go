package endpoints

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/structs"
)

// Choosing N of a service's instances for a key by rendezvous hashing:
// every instance is scored by a hash of itself and the key, and the N
// lowest scores win. The same key keeps picking the same instances while
// they live, and losing one instance only moves the keys that had it, so
// callers spread over instances without coordinating.

// errChoose is Nomad's answer to a malformed choose parameter.
const errChoose = "failed to choose services: Parameter for choose must be in form '<number>|<key>'"

// parseChoose splits "N|key"; N must be a positive number.
func parseChoose(choose string) (int, string, error) {
	num, key, ok := strings.Cut(choose, "|")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 1 {
		return 0, "", structs.KindErrorf(structs.ErrInvalid, "%s", errChoose)
	}
	return n, key, nil
}

// chooseServices returns the N registrations with the lowest scores for
// the key, lowest first; all of them when there are fewer.
func chooseServices(regs []*structs.ServiceRegistration, choose string) ([]*structs.ServiceRegistration, error) {
	n, key, err := parseChoose(choose)
	if err != nil {
		return nil, err
	}
	type scored struct {
		score string
		reg   *structs.ServiceRegistration
	}
	all := make([]scored, len(regs))
	for i, r := range regs {
		all[i] = scored{rendezvousScore(r, key), r}
	}
	slices.SortFunc(all, func(a, b scored) int { return strings.Compare(a.score, b.score) })
	out := make([]*structs.ServiceRegistration, 0, min(n, len(all)))
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.reg)
	}
	return out, nil
}

// rendezvousScore hashes what identifies an instance, then the key, in
// the order Nomad does, so that both pick the same instances.
func rendezvousScore(r *structs.ServiceRegistration, key string) string {
	h := sha256.New()
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(r.Port)))
	for _, s := range []string{r.AllocID, r.ID, r.Namespace, r.Address, r.ServiceName} {
		h.Write([]byte(s))
	}
	for _, t := range r.Tags {
		h.Write([]byte(t))
	}
	h.Write([]byte(key))
	return hex.EncodeToString(h.Sum(nil))
}
