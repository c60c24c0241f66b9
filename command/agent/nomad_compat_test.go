package agent

import (
	"context"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestNomadAPICompat drives the HTTP API with HashiCorp's own Go client
// (github.com/hashicorp/nomad/api): every answer must decode into its
// types with the values we sent, and its request bodies must be
// understood. The server behind is the fake of the handler tests.
func TestNomadAPICompat(t *testing.T) {
	h := newTestHTTP(t)
	client, err := nomadapi.NewClient(&nomadapi.Config{Address: h.srv.URL})
	must.NoError(t, err)

	// Register: Nomad's client sends its own Job shape.
	h.rpc.onWrite("Job.Register", func(args, reply interface{}) error {
		a := args.(*structs.JobRegisterRequest)
		must.NoError(t, h.rpc.state.UpsertJob(20, a.Job))
		out := reply.(*structs.JobRegisterResponse)
		out.EvalID, out.EvalCreateIndex, out.JobModifyIndex, out.Index = "eval-1", 20, 20, 20
		return nil
	})
	job := nomadapi.NewServiceJob("web", "web", "global", 60)
	job.Datacenters = []string{"dc1"}
	task := nomadapi.NewTask("server", "raw_exec").SetConfig("command", "/bin/sleep").SetConfig("args", []string{"60"})
	task.Require(&nomadapi.Resources{CPU: new(100), MemoryMB: new(64)})
	job.AddTaskGroup(nomadapi.NewTaskGroup("cache", 2).AddTask(task))
	reg, wm, err := client.Jobs().Register(job, nil)
	must.NoError(t, err)
	must.Eq(t, "eval-1", reg.EvalID)
	must.Eq(t, 20, wm.LastIndex)
	stored := h.rpc.lastCall(t, "Job.Register").(*structs.JobRegisterRequest).Job
	must.Eq(t, 60, stored.Priority)
	must.Eq[any](t, "/bin/sleep", stored.TaskGroups[0].Tasks[0].Config["command"])

	// Reads.
	jobs, qm, err := client.Jobs().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, jobs)
	must.Eq(t, "web", jobs[0].ID)
	must.Eq(t, 20, qm.LastIndex)
	must.True(t, qm.KnownLeader)

	info, _, err := client.Jobs().Info("web", nil)
	must.NoError(t, err)
	must.Eq(t, "web", *info.ID)
	must.Eq(t, 2, *info.TaskGroups[0].Count)
	must.Eq(t, 64, *info.TaskGroups[0].Tasks[0].Resources.MemoryMB)

	summary, _, err := client.Jobs().Summary("web", nil)
	must.NoError(t, err)
	must.Eq(t, "web", summary.JobID)
	must.MapContainsKey(t, summary.Summary, "cache")

	node := mock.Node()
	must.NoError(t, h.rpc.state.UpsertNode(21, node))
	eval := mock.Eval(mock.EvalForJob(stored))
	must.NoError(t, h.rpc.state.UpsertEvals(22, []*structs.Evaluation{eval}))
	alloc := mock.Alloc(mock.ForJob(stored, 0), mock.OnNode(node))
	alloc.EvalID = eval.ID
	scores := map[string]float64{structs.ScorerBinPack: 0.25, structs.ScorerAntiAffinity: 0, structs.ScorerPenalty: -1}
	alloc.Metrics = &structs.AllocMetric{NodesEvaluated: 1, ScoreMetaData: []*structs.NodeScoreMeta{
		{NodeID: node.ID, Scores: structs.NamedScoresOf(scores), NormScore: -0.25}}}
	must.NoError(t, h.rpc.state.UpsertAllocs(23, []*structs.Allocation{alloc}))

	evals, _, err := client.Jobs().Evaluations("web", nil)
	must.NoError(t, err)
	must.Len(t, 1, evals)
	must.Eq(t, eval.ID, evals[0].ID)
	allocs, _, err := client.Jobs().Allocations("web", false, nil)
	must.NoError(t, err)
	must.Len(t, 1, allocs)
	must.Eq(t, node.ID, allocs[0].NodeID)
	fullAlloc, _, err := client.Allocations().Info(alloc.ID, nil)
	must.NoError(t, err)
	must.Eq(t, "web", *fullAlloc.Job.ID)
	// Scores are held as a list but served as the map Nomad's client reads.
	must.Eq(t, scores, fullAlloc.Metrics.ScoreMetaData[0].Scores)
	must.Eq(t, -0.25, fullAlloc.Metrics.ScoreMetaData[0].NormScore)
	evalInfo, _, err := client.Evaluations().Info(eval.ID, nil)
	must.NoError(t, err)
	must.Eq(t, eval.Status, evalInfo.Status)

	nodes, _, err := client.Nodes().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, nodes)
	n, _, err := client.Nodes().Info(node.ID, nil)
	must.NoError(t, err)
	must.Eq(t, node.Name, n.Name)

	// Plan.
	h.rpc.onWrite("Job.Plan", func(args, reply interface{}) error {
		out := reply.(*structs.JobPlanResponse)
		out.Annotations = &structs.PlanAnnotations{DesiredTGUpdates: map[string]*structs.DesiredUpdates{"cache": {Place: 2}}}
		out.JobModifyIndex, out.Index = 20, 24
		return nil
	})
	plan, _, err := client.Jobs().Plan(job, true, nil)
	must.NoError(t, err)
	must.Eq(t, uint64(2), plan.Annotations.DesiredTGUpdates["cache"].Place)

	// Scheduler configuration and workers.
	sc, _, err := client.Operator().SchedulerGetConfiguration(nil)
	must.NoError(t, err)
	must.Eq(t, "binpack", sc.SchedulerConfig.SchedulerAlgorithm)
	must.True(t, sc.SchedulerConfig.PreemptionConfig.SystemSchedulerEnabled)
	workers, err := client.Agent().GetSchedulerWorkersInfo(nil)
	must.NoError(t, err)
	must.Eq(t, "n1.global", workers.ServerID)
	must.Len(t, 2, workers.Schedulers)
	pool, err := client.Agent().GetSchedulerWorkerConfig(nil)
	must.NoError(t, err)
	must.Eq(t, 2, pool.NumSchedulers)
	members, err := client.Agent().Members()
	must.NoError(t, err)
	must.Eq(t, "n1.global", members.Members[0].Name)
	leader, err := client.Status().Leader()
	must.NoError(t, err)
	must.Eq(t, "127.0.0.1:4647", leader)

	// Event stream from the beginning of the buffer.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := client.EventStream().Stream(ctx, map[nomadapi.Topic][]string{nomadapi.TopicJob: {"web"}}, 0, nil)
	must.NoError(t, err)
	select {
	case ev := <-ch:
		must.NoError(t, ev.Err)
		must.Eq(t, 20, ev.Index)
		got, err := ev.Events[0].Job()
		must.NoError(t, err)
		must.Eq(t, "web", *got.ID)
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}

	// Deregister.
	h.rpc.onWrite("Job.Deregister", func(args, reply interface{}) error {
		reply.(*structs.JobDeregisterResponse).EvalID = "eval-2"
		return nil
	})
	evalID, _, err := client.Jobs().Deregister("web", true, nil)
	must.NoError(t, err)
	must.Eq(t, "eval-2", evalID)
	must.True(t, h.rpc.lastCall(t, "Job.Deregister").(*structs.JobDeregisterRequest).Purge)

	// Errors surface with Nomad's status codes.
	_, _, err = client.Jobs().Info("missing", nil)
	must.ErrorContains(t, err, "404")
}

// TestRealServer_NomadAPI drives a real dev agent with HashiCorp's Go
// client: register, list, info, summary, plan, evaluations, allocations,
// scheduler configuration, the event stream and deregister.
func TestRealServer_NomadAPI(t *testing.T) {
	ra := startDevAgent(t)
	client, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base})
	must.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, err := client.EventStream().Stream(ctx, map[nomadapi.Topic][]string{nomadapi.TopicJob: {"web"}}, 0, nil)
	must.NoError(t, err)

	job := nomadapi.NewServiceJob("web", "web", "global", 60)
	// No node is in this datacenter: the dev agent's own client may
	// register at any moment, and the plan, allocation and eval checks
	// below need the job to stay unplaced whenever it does.
	job.Datacenters = []string{"dc-without-nodes"}
	task := nomadapi.NewTask("server", "raw_exec").SetConfig("command", "/bin/sleep").SetConfig("args", []string{"60"})
	task.Require(&nomadapi.Resources{CPU: new(100), MemoryMB: new(64)})
	job.AddTaskGroup(nomadapi.NewTaskGroup("cache", 2).AddTask(task))

	reg, wm, err := client.Jobs().Register(job, nil)
	must.NoError(t, err)
	must.NotEq(t, "", reg.EvalID)
	must.Positive(t, wm.LastIndex)

	_, _, err = client.Jobs().EnforceRegister(job, 0, nil)
	must.ErrorContains(t, err, "400")

	jobs, qm, err := client.Jobs().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, jobs)
	must.True(t, qm.KnownLeader)
	info, _, err := client.Jobs().Info("web", nil)
	must.NoError(t, err)
	must.Eq(t, 60, *info.Priority)
	must.Eq[any](t, []any{"60"}, info.TaskGroups[0].Tasks[0].Config["args"])
	summary, _, err := client.Jobs().Summary("web", nil)
	must.NoError(t, err)
	must.MapContainsKey(t, summary.Summary, "cache")

	plan, _, err := client.Jobs().Plan(job, true, nil)
	must.NoError(t, err)
	must.Eq(t, uint64(2), plan.Annotations.DesiredTGUpdates["cache"].Place)

	// The registration's eval, and the blocked eval a worker may already
	// have left behind (no node can run the job).
	evals, _, err := client.Jobs().Evaluations("web", nil)
	must.NoError(t, err)
	var evalIDs []string
	for _, e := range evals {
		evalIDs = append(evalIDs, e.ID)
	}
	must.SliceContains(t, evalIDs, reg.EvalID)
	allocs, _, err := client.Jobs().Allocations("web", false, nil)
	must.NoError(t, err)
	must.SliceEmpty(t, allocs)

	sc, _, err := client.Operator().SchedulerGetConfiguration(nil)
	must.NoError(t, err)
	sc.SchedulerConfig.MemoryOversubscriptionEnabled = true
	upd, _, err := client.Operator().SchedulerCASConfiguration(sc.SchedulerConfig, nil)
	must.NoError(t, err)
	must.True(t, upd.Updated)

	select {
	case ev := <-events:
		must.NoError(t, ev.Err)
		got, err := ev.Events[0].Job()
		must.NoError(t, err)
		must.Eq(t, "web", *got.ID)
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}

	evalID, _, err := client.Jobs().Deregister("web", false, nil)
	must.NoError(t, err)
	must.NotEq(t, "", evalID)
	stopped, _, err := client.Jobs().Info("web", nil)
	must.NoError(t, err)
	must.True(t, *stopped.Stop)

	// The server's scheduling workers, through Nomad's client.
	workers, err := client.Agent().GetSchedulerWorkersInfo(nil)
	must.NoError(t, err)
	must.Eq(t, "a1.global", workers.ServerID)
	must.SliceNotEmpty(t, workers.Schedulers)
	must.SliceContains(t, workers.Schedulers[0].EnabledSchedulers, "_core")
	pool, err := client.Agent().SetSchedulerWorkerConfig(nomadapi.SchedulerWorkerPoolArgs{
		NumSchedulers: 1, EnabledSchedulers: []string{"service", "_core"},
	}, nil)
	must.NoError(t, err)
	must.Eq(t, 1, pool.NumSchedulers)
	must.Eq(t, []string{"service", "_core"}, pool.EnabledSchedulers)
	workers, err = client.Agent().GetSchedulerWorkersInfo(nil)
	must.NoError(t, err)
	must.Len(t, 1, workers.Schedulers)
}
