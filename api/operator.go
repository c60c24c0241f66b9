package api

import (
	"net/http"
	"net/url"
	"strconv"
)

// Scheduler algorithms.
const (
	SchedulerAlgorithmBinpack = "binpack"
	SchedulerAlgorithmSpread  = "spread"
)

// SchedulerConfiguration is the cluster-wide scheduler configuration
// stored in Raft.
type SchedulerConfiguration struct {
	SchedulerAlgorithm            string
	PreemptionConfig              PreemptionConfig
	MemoryOversubscriptionEnabled bool
	RejectJobRegistration         bool
	PauseEvalBroker               bool
	// NodeLimitForFeasibilityChecks caps nodes scored for groups with
	// affinities or spreads; 0 means 100.
	NodeLimitForFeasibilityChecks uint
	// EvalBacklogLimit refuses job registrations, dispatches and scalings
	// with 429 while the leader holds this many ready and blocked
	// evaluations; 0 means no limit. Nomad has no such field, so its
	// clients leave it out, and a write without it keeps the current
	// limit.
	EvalBacklogLimit *uint `json:",omitempty"`
	CreateIndex      uint64
	ModifyIndex      uint64
}

// PreemptionConfig enables preemption per scheduler type.
type PreemptionConfig struct {
	SystemSchedulerEnabled   bool
	SysBatchSchedulerEnabled bool
	BatchSchedulerEnabled    bool
	ServiceSchedulerEnabled  bool
}

// SchedulerConfigurationResponse answers GET
// /v1/operator/scheduler/configuration.
type SchedulerConfigurationResponse struct {
	SchedulerConfig *SchedulerConfiguration
}

// SchedulerSetConfigurationResponse answers a set. Updated is only
// meaningful for a check-and-set write: false means the index did not
// match and nothing changed.
type SchedulerSetConfigurationResponse struct {
	Updated bool
}

// RaftServer is one server of the Raft configuration.
type RaftServer struct {
	ID           string
	Node         string
	Address      string
	Leader       bool
	Voter        bool
	RaftProtocol string
}

// RaftConfiguration answers GET /v1/operator/raft/configuration.
type RaftConfiguration struct {
	Servers []*RaftServer
	Index   uint64
}

// Operator is the /v1/operator endpoint group.
type Operator struct {
	client *Client
}

// Operator returns the operator endpoint group.
func (c *Client) Operator() *Operator { return &Operator{client: c} }

// SchedulerGetConfiguration returns the scheduler configuration.
func (o *Operator) SchedulerGetConfiguration(q *QueryOptions) (*SchedulerConfigurationResponse, *QueryMeta, error) {
	var resp SchedulerConfigurationResponse
	qm, err := o.client.query("/v1/operator/scheduler/configuration", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// SchedulerSetConfiguration replaces the scheduler configuration
// unconditionally.
func (o *Operator) SchedulerSetConfiguration(conf *SchedulerConfiguration, q *WriteOptions) (*SchedulerSetConfigurationResponse, *WriteMeta, error) {
	return o.setSchedulerConfiguration("/v1/operator/scheduler/configuration", conf, q)
}

// SchedulerCASConfiguration replaces the scheduler configuration only if
// its ModifyIndex still equals conf.ModifyIndex (check-and-set).
func (o *Operator) SchedulerCASConfiguration(conf *SchedulerConfiguration, q *WriteOptions) (*SchedulerSetConfigurationResponse, *WriteMeta, error) {
	path := "/v1/operator/scheduler/configuration?cas=" + strconv.FormatUint(conf.ModifyIndex, 10)
	return o.setSchedulerConfiguration(path, conf, q)
}

func (o *Operator) setSchedulerConfiguration(path string, conf *SchedulerConfiguration, q *WriteOptions) (*SchedulerSetConfigurationResponse, *WriteMeta, error) {
	var resp SchedulerSetConfigurationResponse
	wm, err := o.client.write(http.MethodPut, path, conf, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// RaftGetConfiguration returns the servers of the Raft configuration.
func (o *Operator) RaftGetConfiguration(q *QueryOptions) (*RaftConfiguration, error) {
	var resp RaftConfiguration
	if _, err := o.client.query("/v1/operator/raft/configuration", &resp, q); err != nil {
		return nil, err
	}
	return &resp, nil
}

// RaftTransferLeadershipByAddress asks the leader to hand its leadership
// to the server at address ("IP:port").
func (o *Operator) RaftTransferLeadershipByAddress(address string, q *WriteOptions) error {
	_, err := o.client.write(http.MethodPut, "/v1/operator/raft/transfer-leadership?address="+url.QueryEscape(address), nil, nil, q)
	return err
}

// RaftTransferLeadershipByID asks the leader to hand its leadership to
// the server with Raft ID id.
func (o *Operator) RaftTransferLeadershipByID(id string, q *WriteOptions) error {
	_, err := o.client.write(http.MethodPut, "/v1/operator/raft/transfer-leadership?id="+url.QueryEscape(id), nil, nil, q)
	return err
}
