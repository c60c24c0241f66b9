package mempressure

import (
	"runtime"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestGate_Hysteresis(t *testing.T) {
	const gb = 1 << 30
	at := func(server string, heapMB, limitMB uint64) structs.ServerMemory {
		return structs.ServerMemory{Server: server, HeapLive: heapMB << 20, Limit: limitMB << 20}
	}
	var g Gate
	steps := []struct {
		name     string
		readings []structs.ServerMemory
		refusing bool
		worst    string
	}{
		{"no limits count for nothing", []structs.ServerMemory{{Server: "a", HeapLive: 10 * gb}}, false, ""},
		{"all under the high mark", []structs.ServerMemory{at("a", 1000, 2048), at("b", 1400, 2048)}, false, "b"},
		{"a follower reaches 70%", []structs.ServerMemory{at("a", 1000, 2048), at("b", 1434, 2048)}, true, "b"},
		{"between the marks: still refusing", []structs.ServerMemory{at("a", 1000, 2048), at("b", 1300, 2048)}, true, "b"},
		{"the smaller figure is the fuller", []structs.ServerMemory{at("a", 700, 1024), at("b", 1200, 2048)}, true, "a"},
		{"every server under 60%", []structs.ServerMemory{at("a", 600, 1024), at("b", 1100, 2048)}, false, "a"},
		{"between the marks from below: not refusing", []structs.ServerMemory{at("a", 650, 1024)}, false, "a"},
	}
	for _, s := range steps {
		must.Eq(t, s.refusing, g.Update(s.readings), must.Sprint(s.name))
		refusing, worst := g.Refusing()
		must.Eq(t, s.refusing, refusing, must.Sprint(s.name))
		must.Eq(t, s.worst, worst.Server, must.Sprint(s.name))
	}

	g.Update([]structs.ServerMemory{at("a", 2000, 2048)})
	g.Reset()
	refusing, worst := g.Refusing()
	must.False(t, refusing)
	must.Eq(t, structs.ServerMemory{}, worst)
}

func TestLiveHeap_ReadsTheRuntime(t *testing.T) {
	keep := make([]byte, 1<<20)
	runtime.GC() // 0 until a collection has marked something
	must.Greater(t, uint64(len(keep)), LiveHeap())
	runtime.KeepAlive(keep)
}
