package api

// Operations on a running allocation, served by the client running it
// (/v1/client/allocation/:id).

// AllocResourceUsage is an allocation's measured CPU and memory: the sum
// over its tasks, and each task's.
type AllocResourceUsage struct {
	ResourceUsage *ResourceUsage
	Tasks         map[string]*TaskResourceUsage
	Timestamp     int64
}

// TaskResourceUsage is one task's usage, and each of its processes'.
type TaskResourceUsage struct {
	ResourceUsage *ResourceUsage
	Timestamp     int64
	Pids          map[string]*ResourceUsage
}

// ResourceUsage is memory and CPU usage.
type ResourceUsage struct {
	MemoryStats *MemoryStats
	CpuStats    *CpuStats
}

// MemoryStats is memory usage in bytes; Measured names the fields that
// were measured.
type MemoryStats struct {
	RSS            uint64
	Cache          uint64
	Swap           uint64
	MappedFile     uint64
	Usage          uint64
	MaxUsage       uint64
	KernelUsage    uint64
	KernelMaxUsage uint64
	Measured       []string
}

// CpuStats is CPU usage in percent of one core (TotalTicks: in MHz).
type CpuStats struct {
	SystemMode       float64
	UserMode         float64
	TotalTicks       float64
	ThrottledPeriods uint64
	ThrottledTime    uint64
	Percent          float64
	Measured         []string
}

// Stats measures an allocation's resource usage.
func (a *Allocations) Stats(alloc *Allocation, q *QueryOptions) (*AllocResourceUsage, error) {
	var out AllocResourceUsage
	if _, err := a.client.query("/v1/client/allocation/"+escape(alloc.ID)+"/stats", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}

// Restart restarts a task of the allocation in place, or with taskName ""
// every running task. It does not count against the restart policy.
func (a *Allocations) Restart(alloc *Allocation, taskName string, q *QueryOptions) error {
	return a.restart(alloc, map[string]any{"TaskName": taskName}, q)
}

// RestartAllTasks restarts every task of the allocation that runs.
func (a *Allocations) RestartAllTasks(alloc *Allocation, q *QueryOptions) error {
	return a.restart(alloc, map[string]any{"AllTasks": true}, q)
}

func (a *Allocations) restart(alloc *Allocation, body map[string]any, q *QueryOptions) error {
	_, err := a.client.write("PUT", "/v1/client/allocation/"+escape(alloc.ID)+"/restart", body, nil, writeOptionsFrom(q))
	return err
}

// Signal sends a signal ("SIGHUP") to a task of the allocation, or with
// task "" to every running task.
func (a *Allocations) Signal(alloc *Allocation, q *QueryOptions, task, signal string) error {
	body := map[string]any{"Task": task, "Signal": signal}
	_, err := a.client.write("PUT", "/v1/client/allocation/"+escape(alloc.ID)+"/signal", body, nil, writeOptionsFrom(q))
	return err
}

// writeOptionsFrom carries a read's region, namespace, token and context
// over to a write, for client operations that take query options as
// HashiCorp's client does.
func writeOptionsFrom(q *QueryOptions) *WriteOptions {
	if q == nil {
		return nil
	}
	w := &WriteOptions{Region: q.Region, Namespace: q.Namespace, AuthToken: q.AuthToken, Params: q.Params, Headers: q.Headers}
	return w.WithContext(q.Context())
}
