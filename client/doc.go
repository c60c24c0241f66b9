// Package client is the node agent: it describes the machine to the
// servers, runs the allocations they assign to it, and reports how they
// fare.
//
// Client (client.go) ties the parts together. NewClient fingerprints the
// machine, restores the allocations a previous run left (reattaching to
// tasks that kept running) and starts its loops:
//
//	register.go    Node.Register, retried with backoff
//	heartbeat.go   Node.UpdateStatus at the TTL the servers return; a node
//	               the servers forgot registers again
//	alloc_watch.go blocking Node.GetClientAllocs keyed by AllocModifyIndex,
//	               then Alloc.GetAllocs for the changed allocations only
//	alloc_sync.go  status changes batched into one Node.UpdateAlloc
//	gc.go          finished allocations beyond gc_max_allocs collected
//
// It reaches servers through RPCer endpoints (the in-process server, or
// a connection); servers.go keeps the list and moves on from a server
// that cannot answer. The HTTP agent serves /v1/client/* from its
// methods: alloc_fs.go (ls, stat, cat, confined to the alloc directory),
// log_reader.go (task logs as Nomad's frames, across rotated files),
// alloc_stats.go (CPU and memory from /proc) and alloc_ops.go (restart,
// signal). Deployment health is judged by the servers from the task
// states the client reports; the client does not set DeploymentStatus.
//
// Its parts live in sub-packages, each one idea:
//
//	fingerprint   CPU, memory, disk, network and OS of the machine, and
//	              BuildNode, which turns them into the structs.Node a
//	              client registers
//	state         what survives a client restart: node identity, the
//	              allocations and, per task, its state and driver handle
//	allocdir      the directory tree of an allocation and its tasks
//	logmon        size-bounded, numbered log files for task output
//	taskenv       a task's environment and ${...} interpolation
//	driver        the driver seam (Driver, Handle) with raw_exec, exec and
//	              mock_driver; executor is the per-task supervisor process
//	              that process drivers run tasks under; cgroup holds the
//	              cgroup v2 limits of exec
//	taskrunner    one task's life: start, wait, restart policy, kill
//	allocrunner   one allocation's tasks in lifecycle order, its client
//	              status, and Set, which keeps a node's alloc runners in
//	              line with the servers' list of allocations
//
// On disk, under the agent's data_dir:
//
//	client/client-id, client/secret-id     the node's identity
//	client/state/allocs/<alloc-id>/        allocations and task state
//	client/tasks/<alloc-id>/<task>/        drivers' private task state
//	                                       (executor spec, result, log)
//	alloc/<alloc-id>/                      alloc directories (allocdir)
//
// Tasks of the exec driver run as nobody without a chroot, so data_dir
// and data_dir/alloc must be traversable by other users (mode 0711 or
// 0755).
//
// A binary that runs tasks through raw_exec or exec must call
// executor.Init first thing in main: task supervisors are the same
// binary, started as "<binary> executor <spec>".
package client
