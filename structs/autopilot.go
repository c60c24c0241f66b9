package structs

import (
	"fmt"
	"time"
)

// AutopilotConfig is the cluster-wide configuration of the servers'
// self-management, stored in Raft: when the leader removes dead servers
// and what it calls a healthy server.
type AutopilotConfig struct {
	// CleanupDeadServers lets the leader remove servers gossip reports
	// failed (or that left) from the Raft configuration.
	CleanupDeadServers bool
	// LastContactThreshold is the longest a healthy server may go
	// without contact from the leader.
	LastContactThreshold time.Duration
	// MaxTrailingLogs is how far a healthy server's log may trail the
	// leader's.
	MaxTrailingLogs uint64
	// MinQuorum is the fewest voters the dead-server cleanup leaves.
	MinQuorum uint
	// ServerStabilizationTime is how long a new server must stay healthy
	// before it counts as stable.
	ServerStabilizationTime time.Duration
	// The Enterprise features: stored and answered, not acted on.
	EnableRedundancyZones   bool
	DisableUpgradeMigration bool
	EnableCustomUpgrades    bool

	CreateIndex uint64
	ModifyIndex uint64
}

// DefaultAutopilotConfig is what a new cluster starts with, as Nomad's.
func DefaultAutopilotConfig() *AutopilotConfig {
	return &AutopilotConfig{
		CleanupDeadServers:      true,
		LastContactThreshold:    200 * time.Millisecond,
		MaxTrailingLogs:         250,
		ServerStabilizationTime: 10 * time.Second,
	}
}

// Validate lists what cannot be stored.
func (c *AutopilotConfig) Validate() error {
	var problems []string
	if c.LastContactThreshold < 0 {
		problems = append(problems, fmt.Sprintf("LastContactThreshold must be >= 0, got %s", c.LastContactThreshold))
	}
	if c.ServerStabilizationTime < 0 {
		problems = append(problems, fmt.Sprintf("ServerStabilizationTime must be >= 0, got %s", c.ServerStabilizationTime))
	}
	if len(problems) > 0 {
		return &ValidationError{Problems: problems}
	}
	return nil
}

// Indexes returns the Raft indexes of the configuration's first and last
// writes.
func (c *AutopilotConfig) Indexes() (create, modify uint64) { return c.CreateIndex, c.ModifyIndex }

// SetIndexes stamps the configuration with the indexes of its writes.
func (c *AutopilotConfig) SetIndexes(create, modify uint64) {
	c.CreateIndex, c.ModifyIndex = create, modify
}

// Copy returns a copy.
func (c *AutopilotConfig) Copy() *AutopilotConfig {
	if c == nil {
		return nil
	}
	out := *c
	return &out
}

// AutopilotSetConfigRequest replaces the autopilot configuration,
// optionally as a check-and-set on Config.ModifyIndex.
type AutopilotSetConfigRequest struct {
	Config AutopilotConfig
	CAS    bool
	WriteRequest
}

// AutopilotSetConfigResponse reports whether a CAS write applied.
type AutopilotSetConfigResponse struct {
	Updated bool
	WriteMeta
}

// AutopilotConfigResponse returns the stored configuration (the default
// before any was written).
type AutopilotConfigResponse struct {
	Config *AutopilotConfig
	QueryMeta
}

// RaftStats is one server's view of its Raft log, for the leader's
// health report.
type RaftStats struct {
	// LastContact is the time since the server last heard from the
	// leader; 0 on the leader, -1 if never.
	LastContact time.Duration
	LastTerm    uint64
	LastIndex   uint64
}

// ServerHealth is the health of one server of the Raft configuration.
type ServerHealth struct {
	ID          string
	Name        string
	Address     string
	SerfStatus  string
	Version     string
	Leader      bool
	LastContact time.Duration
	LastTerm    uint64
	LastIndex   uint64
	Healthy     bool
	Voter       bool
	// StableSince is when the server last turned healthy or unhealthy,
	// as the leader saw it.
	StableSince time.Time
}

// OperatorHealthReply is the servers' health as the leader sees it.
type OperatorHealthReply struct {
	// Healthy is true when every server is.
	Healthy bool
	// FailureTolerance is how many voters may fail with the cluster
	// keeping its quorum.
	FailureTolerance int
	Servers          []ServerHealth
	// Leader and Voters are Raft server IDs.
	Leader string
	Voters []string
	QueryMeta
}

// ServerMemory is one server's memory figure and live heap, for the
// leader's memory backpressure (Status.MemoryStats).
type ServerMemory struct {
	// Server is the server's name.
	Server string
	// HeapLive is the heap the server's last garbage collection marked
	// live, Limit its configured memory figure (0: none), in bytes.
	HeapLive, Limit uint64
}
