package priorityheap

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestPriorityHeap_PopsInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	h := New(func(a, b int) bool { return a < b })
	var want []int
	for range 500 {
		v := r.IntN(100)
		want = append(want, v)
		h.Push(v)
		if h.Len() != len(want) {
			t.Fatalf("Len = %d, want %d", h.Len(), len(want))
		}
	}
	slices.Sort(want)
	for i, w := range want {
		if top, _ := h.Peek(); top != w {
			t.Fatalf("Peek #%d = %d, want %d", i, top, w)
		}
		got, ok := h.Pop()
		if !ok || got != w {
			t.Fatalf("Pop #%d = %d, %v, want %d", i, got, ok, w)
		}
	}
	if _, ok := h.Pop(); ok {
		t.Fatal("Pop on an empty heap reported an item")
	}
	if _, ok := h.Peek(); ok {
		t.Fatal("Peek on an empty heap reported an item")
	}
}

func TestPriorityHeap_Drain(t *testing.T) {
	h := New(func(a, b int) bool { return a < b })
	for _, v := range []int{3, 1, 2} {
		h.Push(v)
	}
	got := h.Drain()
	slices.Sort(got)
	if !slices.Equal(got, []int{1, 2, 3}) || h.Len() != 0 {
		t.Fatalf("Drain = %v, Len after = %d", got, h.Len())
	}
}
