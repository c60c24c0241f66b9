package api

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestAllocFS_Logs(t *testing.T) {
	// Frames follow one another without separators; {} is a heartbeat.
	f := newFakeAgent(t, reply{Body: `{"Offset":3,"Data":"aGkK","File":"alloc/logs/web.stdout.0"}{}` +
		`{"File":"alloc/logs/web.stdout.0","FileEvent":"file truncated"}{"Offset":2,"Data":"eW8=","File":"alloc/logs/web.stdout.0"}`})
	c := f.client(t)
	frames, errs := c.AllocFS().Logs(&Allocation{ID: "a1"}, true, "web", "stderr", OriginEnd, 5, nil, nil)
	var got []StreamFrame
	for fr := range frames {
		got = append(got, *fr)
	}
	select {
	case err := <-errs:
		t.Fatalf("error: %v", err)
	default:
	}
	if len(got) != 3 || string(got[0].Data) != "hi\n" || got[1].FileEvent != "file truncated" || string(got[2].Data) != "yo" {
		t.Fatalf("frames = %+v", got)
	}
	req := f.only(t)
	if req.Path != "/v1/client/fs/logs/a1" {
		t.Fatalf("path %s", req.Path)
	}
	for k, want := range map[string]string{"follow": "true", "task": "web", "type": "stderr", "origin": "end", "offset": "5"} {
		if got := req.Query.Get(k); got != want {
			t.Errorf("query %s = %q, want %q", k, got, want)
		}
	}
}

func TestAllocFS_LogsErrors(t *testing.T) {
	f := newFakeAgent(t, reply{Status: 400, Body: `unknown task name "db"`})
	_, errs := f.client(t).AllocFS().Logs(&Allocation{ID: "a1"}, false, "db", "stdout", OriginStart, 0, nil, nil)
	var ue *UnexpectedResponseError
	if err := <-errs; !errors.As(err, &ue) || ue.StatusCode != 400 || ue.Body != `unknown task name "db"` {
		t.Fatalf("err = %v", err)
	}

	g := newFakeAgent(t, reply{Body: `{"Data":"aGkK"}not json`})
	frames, errs := g.client(t).AllocFS().Logs(&Allocation{ID: "a1"}, false, "web", "stdout", OriginStart, 0, nil, nil)
	for range frames {
	}
	if err := <-errs; err == nil || !strings.Contains(err.Error(), "decoding log stream") {
		t.Fatalf("err = %v", err)
	}
}

func TestAllocFS_Files(t *testing.T) {
	f := newFakeAgent(t, reply{Body: `[{"Name":"alloc","IsDir":true,"FileMode":"drwxr-xr-x"}]`})
	c := f.client(t)
	files, _, err := c.AllocFS().List(&Allocation{ID: "a1"}, "alloc/logs", nil)
	if err != nil || len(files) != 1 || !files[0].IsDir {
		t.Fatalf("List = %+v, %v", files, err)
	}
	if r := f.only(t); r.Path != "/v1/client/fs/ls/a1" || r.Query.Get("path") != "alloc/logs" {
		t.Fatalf("request %+v", r)
	}

	g := newFakeAgent(t, reply{Body: "hello\n"})
	rc, err := g.client(t).AllocFS().ReadAt(&Allocation{ID: "a1"}, "x y", 1, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "hello\n" {
		t.Fatalf("body %q", b)
	}
	r := g.only(t)
	if r.Path != "/v1/client/fs/readat/a1" || r.Query.Get("path") != "x y" || r.Query.Get("offset") != "1" || r.Query.Get("limit") != "3" {
		t.Fatalf("request %+v", r)
	}
}

func TestAllocations_ClientOperations(t *testing.T) {
	f := newFakeAgent(t, reply{Body: `{}`})
	c := f.client(t)
	a := &Allocation{ID: "a1"}
	if err := c.Allocations().Restart(a, "web", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Allocations().RestartAllTasks(a, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Allocations().Signal(a, nil, "web", "SIGHUP"); err != nil {
		t.Fatal(err)
	}
	reqs := f.all()
	want := []struct{ method, path, body string }{
		{"PUT", "/v1/client/allocation/a1/restart", `{"TaskName":"web"}`},
		{"PUT", "/v1/client/allocation/a1/restart", `{"AllTasks":true}`},
		{"PUT", "/v1/client/allocation/a1/signal", `{"Signal":"SIGHUP","Task":"web"}`},
	}
	for i, w := range want {
		if reqs[i].Method != w.method || reqs[i].Path != w.path {
			t.Errorf("request %d: %s %s", i, reqs[i].Method, reqs[i].Path)
		}
		assertJSONEqual(t, reqs[i].Body, w.body)
	}

	s := newFakeAgent(t, reply{Body: `{"ResourceUsage":{"MemoryStats":{"RSS":4096,"Measured":["RSS"]},"CpuStats":{"Percent":12.5}},` +
		`"Tasks":{"web":{"ResourceUsage":{"MemoryStats":{"RSS":4096}},"Pids":{"42":{}}}},"Timestamp":7}`})
	usage, err := s.client(t).Allocations().Stats(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	if usage.ResourceUsage.MemoryStats.RSS != 4096 || usage.ResourceUsage.CpuStats.Percent != 12.5 || usage.Tasks["web"].Pids["42"] == nil {
		t.Fatalf("usage %+v", usage)
	}
}
