package scheduler

import "slices"

// The visiting order of a selector is a set of circular doubly linked
// lists over candidate indices, one per bucket, held in the selector's
// next/prev/heads/sizes slices. Taking a node out or putting it back is
// O(1); a placement starts each bucket at its head and, unless affinity
// fixes the order, the head then moves past the nodes visited, so
// consecutive placements look at different nodes the way a rotating
// cursor over a shuffled list does.

// link builds the lists from nodes in visiting order: each bucket's
// nodes are chained in order, and each chain is then closed into a ring.
func (s *groupSelector) link(order []int32, buckets int) {
	s.heads = make([]int32, buckets)
	s.sizes = make([]int32, buckets)
	tails := make([]int32, buckets)
	for b := range s.heads {
		s.heads[b] = -1
	}
	for _, i := range order {
		b := s.bucket(i)
		if s.heads[b] < 0 {
			s.heads[b] = i
		} else {
			s.next[tails[b]], s.prev[i] = i, tails[b]
		}
		tails[b] = i
		s.sizes[b]++
	}
	for b, h := range s.heads {
		if h >= 0 {
			s.next[tails[b]], s.prev[h] = h, tails[b]
		}
	}
}

// insertLast appends i at the end of its bucket's rotation.
func (s *groupSelector) insertLast(i int32) {
	b := s.bucket(i)
	if h := s.heads[b]; h < 0 {
		s.heads[b], s.next[i], s.prev[i] = i, i, i
	} else {
		s.insertBefore(i, h)
	}
	s.sizes[b]++
}

func (s *groupSelector) insertBefore(i, at int32) {
	p := s.prev[at]
	s.next[p], s.prev[i] = i, p
	s.next[i], s.prev[at] = at, i
}

// unlink takes i out of its bucket.
func (s *groupSelector) unlink(i int32) {
	b := s.bucket(i)
	if s.sizes[b] == 1 {
		s.heads[b] = -1
	} else {
		p, nx := s.prev[i], s.next[i]
		s.next[p], s.prev[nx] = nx, p
		if s.heads[b] == i {
			s.heads[b] = nx
		}
	}
	s.sizes[b]--
}

// relink puts i back: in affinity order when there is one, else at the
// end of the rotation.
func (s *groupSelector) relink(i int32) {
	b := s.bucket(i)
	if s.affinity == nil || s.heads[b] < 0 {
		s.insertLast(i)
		return
	}
	at, steps := s.heads[b], int32(0)
	for steps < s.sizes[b] && s.affinity[at] >= s.affinity[i] {
		at, steps = s.next[at], steps+1
	}
	s.insertBefore(i, at)
	if steps == 0 {
		s.heads[b] = i
	}
	s.sizes[b]++
}

// orderEntry is a bucket's next unvisited node in the merge heap.
type orderEntry struct {
	key    float64
	bucket int32
	node   int32
	left   int32 // nodes of the bucket not yet visited, node included
}

// orderIter walks the live nodes in visiting order. With one bucket it
// follows the list; with several it merges the buckets by key = bucket
// spread score + node affinity, best first, ties going to the lower
// bucket (buckets are numbered in shuffled order).
//
// The iterator reads a node's successor before handing the node out, so
// the caller may take the node out of the order while iterating.
type orderIter struct {
	s      *groupSelector
	merge  bool
	cursor int32
	left   int32
}

func (s *groupSelector) iterate() orderIter {
	if s.spread == nil {
		return orderIter{s: s, cursor: s.heads[0], left: s.sizes[0]}
	}
	s.heap = s.heap[:0]
	for b, head := range s.heads {
		if head >= 0 {
			s.heap = append(s.heap, orderEntry{key: s.key(int32(b), head), bucket: int32(b), node: head, left: s.sizes[b]})
		}
	}
	for k := len(s.heap)/2 - 1; k >= 0; k-- {
		s.siftDown(k)
	}
	return orderIter{s: s, merge: true}
}

func (s *groupSelector) key(b, node int32) float64 {
	k := s.spread.bucketScore[b]
	if s.affinity != nil {
		k += s.affinity[node]
	}
	return k
}

// next returns the next node to visit, or -1 when all were visited.
func (it *orderIter) next() int32 {
	s := it.s
	if !it.merge {
		if it.left == 0 {
			return -1
		}
		i := it.cursor
		it.cursor, it.left = s.next[i], it.left-1
		return i
	}
	if len(s.heap) == 0 {
		return -1
	}
	top := s.heap[0]
	if top.left > 1 {
		nx := s.next[top.node]
		s.heap[0] = orderEntry{key: s.key(top.bucket, nx), bucket: top.bucket, node: nx, left: top.left - 1}
	} else {
		last := len(s.heap) - 1
		s.heap[0] = s.heap[last]
		s.heap = s.heap[:last]
	}
	if len(s.heap) > 0 {
		s.siftDown(0)
	}
	return top.node
}

// rotate moves each bucket's head to its first unvisited node, so the
// next placement starts there. Affinity order is never rotated: its head
// is the most preferred node.
func (it *orderIter) rotate() {
	s := it.s
	if s.affinity != nil {
		return
	}
	if !it.merge {
		if it.left > 0 {
			s.heads[0] = it.cursor
		}
		return
	}
	for _, e := range s.heap {
		s.heads[e.bucket] = e.node
	}
}

func (s *groupSelector) before(a, b orderEntry) bool {
	if a.key != b.key {
		return a.key > b.key
	}
	return a.bucket < b.bucket
}

func (s *groupSelector) siftDown(k int) {
	h := s.heap
	for {
		l := 2*k + 1
		if l >= len(h) {
			return
		}
		best := l
		if r := l + 1; r < len(h) && s.before(h[r], h[l]) {
			best = r
		}
		if !s.before(h[best], h[k]) {
			return
		}
		h[k], h[best] = h[best], h[k]
		k = best
	}
}

// sortStableBy sorts node indices stably by less.
func sortStableBy(xs []int32, less func(a, b int32) bool) {
	slices.SortStableFunc(xs, func(a, b int32) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	})
}
