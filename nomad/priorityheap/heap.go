// Package priorityheap is the generic binary heap under the eval broker's
// ready, pending and delayed sets and under the plan queue. It imports
// nothing.
package priorityheap

// Heap is a binary heap that yields the item for which less
// reports true against every other first. It is the queue under the eval
// broker's ready, pending and delayed sets and under the plan queue; being
// generic over the item type it avoids container/heap's interface boxing
// on the hot enqueue and dequeue paths.
//
// It is not safe for concurrent use; its owner's lock guards it.
type Heap[T any] struct {
	items []T
	less  func(a, b T) bool
}

// New returns an empty heap ordered by less.
func New[T any](less func(a, b T) bool) *Heap[T] {
	return &Heap[T]{less: less}
}

// Len returns the number of items.
func (h *Heap[T]) Len() int { return len(h.items) }

// Push adds x.
func (h *Heap[T]) Push(x T) {
	h.items = append(h.items, x)
	h.up(len(h.items) - 1)
}

// Peek returns the first item without removing it; ok is false when empty.
func (h *Heap[T]) Peek() (first T, ok bool) {
	if len(h.items) == 0 {
		return first, false
	}
	return h.items[0], true
}

// Pop removes and returns the first item; ok is false when empty.
func (h *Heap[T]) Pop() (first T, ok bool) {
	n := len(h.items)
	if n == 0 {
		return first, false
	}
	first = h.items[0]
	last := n - 1
	h.items[0] = h.items[last]
	var zero T
	h.items[last] = zero // let the popped item be collected
	h.items = h.items[:last]
	if last > 0 {
		h.down(0)
	}
	return first, true
}

// Drain removes and returns every item, in no particular order.
func (h *Heap[T]) Drain() []T {
	items := h.items
	h.items = nil
	return items
}

func (h *Heap[T]) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(h.items[i], h.items[parent]) {
			return
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *Heap[T]) down(i int) {
	n := len(h.items)
	for {
		left := 2*i + 1
		if left >= n {
			return
		}
		child := left
		if right := left + 1; right < n && h.less(h.items[right], h.items[left]) {
			child = right
		}
		if !h.less(h.items[child], h.items[i]) {
			return
		}
		h.items[i], h.items[child] = h.items[child], h.items[i]
		i = child
	}
}
