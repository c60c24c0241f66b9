package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// AutopilotConfiguration is the servers' self-management configuration,
// stored in Raft. Its durations travel as strings ("200ms"), as Nomad's.
type AutopilotConfiguration struct {
	// CleanupDeadServers lets the leader remove failed servers from the
	// Raft configuration.
	CleanupDeadServers bool
	// LastContactThreshold is the longest a healthy server may go
	// without contact from the leader.
	LastContactThreshold time.Duration
	// MaxTrailingLogs is how far a healthy server's log may trail.
	MaxTrailingLogs uint64
	// MinQuorum is the fewest voters the dead-server cleanup leaves.
	MinQuorum uint
	// ServerStabilizationTime is how long a new server must be healthy
	// to count as stable.
	ServerStabilizationTime time.Duration
	// Enterprise features: stored, not acted on.
	EnableRedundancyZones   bool
	DisableUpgradeMigration bool
	EnableCustomUpgrades    bool

	CreateIndex uint64
	ModifyIndex uint64
}

// autopilotConfigurationJSON is AutopilotConfiguration on the wire.
type autopilotConfigurationJSON struct {
	LastContactThreshold    string
	ServerStabilizationTime string
	*autopilotConfigurationFields
}

type autopilotConfigurationFields AutopilotConfiguration

// MarshalJSON writes the durations as strings.
func (c *AutopilotConfiguration) MarshalJSON() ([]byte, error) {
	return json.Marshal(&autopilotConfigurationJSON{
		LastContactThreshold:         c.LastContactThreshold.String(),
		ServerStabilizationTime:      c.ServerStabilizationTime.String(),
		autopilotConfigurationFields: (*autopilotConfigurationFields)(c),
	})
}

// UnmarshalJSON reads the durations from strings.
func (c *AutopilotConfiguration) UnmarshalJSON(data []byte) error {
	aux := &autopilotConfigurationJSON{autopilotConfigurationFields: (*autopilotConfigurationFields)(c)}
	if err := json.Unmarshal(data, aux); err != nil {
		return err
	}
	var err error
	if aux.LastContactThreshold != "" {
		if c.LastContactThreshold, err = time.ParseDuration(aux.LastContactThreshold); err != nil {
			return err
		}
	}
	if aux.ServerStabilizationTime != "" {
		if c.ServerStabilizationTime, err = time.ParseDuration(aux.ServerStabilizationTime); err != nil {
			return err
		}
	}
	return nil
}

// ServerHealth is one server's health as the leader judges it.
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
	StableSince time.Time
}

type serverHealthJSON struct {
	LastContact string
	*serverHealthFields
}

type serverHealthFields ServerHealth

// MarshalJSON writes LastContact as a string.
func (h *ServerHealth) MarshalJSON() ([]byte, error) {
	return json.Marshal(&serverHealthJSON{LastContact: h.LastContact.String(), serverHealthFields: (*serverHealthFields)(h)})
}

// UnmarshalJSON reads LastContact from a string.
func (h *ServerHealth) UnmarshalJSON(data []byte) error {
	aux := &serverHealthJSON{serverHealthFields: (*serverHealthFields)(h)}
	if err := json.Unmarshal(data, aux); err != nil {
		return err
	}
	if aux.LastContact == "" {
		return nil
	}
	d, err := time.ParseDuration(aux.LastContact)
	if err != nil {
		return err
	}
	h.LastContact = d
	return nil
}

// OperatorHealthReply is the servers' health: Healthy when every server
// is, FailureTolerance the voters that may fail with the quorum kept.
type OperatorHealthReply struct {
	Healthy          bool
	FailureTolerance int
	Servers          []ServerHealth
	Leader           string
	Voters           []string
}

// AutopilotGetConfiguration returns the autopilot configuration.
func (o *Operator) AutopilotGetConfiguration(q *QueryOptions) (*AutopilotConfiguration, *QueryMeta, error) {
	var out AutopilotConfiguration
	qm, err := o.client.query("/v1/operator/autopilot/configuration", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// AutopilotSetConfiguration replaces the autopilot configuration.
func (o *Operator) AutopilotSetConfiguration(conf *AutopilotConfiguration, q *WriteOptions) (*WriteMeta, error) {
	var out bool
	return o.client.write(http.MethodPut, "/v1/operator/autopilot/configuration", conf, &out, q)
}

// AutopilotCASConfiguration replaces the configuration only if its
// ModifyIndex is still conf.ModifyIndex, and reports whether it did.
func (o *Operator) AutopilotCASConfiguration(conf *AutopilotConfiguration, q *WriteOptions) (bool, *WriteMeta, error) {
	var out bool
	wm, err := o.client.write(http.MethodPut,
		"/v1/operator/autopilot/configuration?cas="+strconv.FormatUint(conf.ModifyIndex, 10), conf, &out, q)
	if err != nil {
		return false, nil, err
	}
	return out, wm, nil
}

// AutopilotServerHealth returns the servers' health. The agent answers
// an unhealthy cluster with 429 and the same body: that is an error here,
// as in Nomad's client, and the health it carried is returned beside it.
// It is not sent again on 429 (the answer is not back-pressure).
func (o *Operator) AutopilotServerHealth(q *QueryOptions) (*OperatorHealthReply, *QueryMeta, error) {
	r := o.client.newRequest(http.MethodGet, "/v1/operator/autopilot/health")
	q.apply(r)
	resp, rtt, err := o.client.do(r)
	if err != nil {
		var ure *UnexpectedResponseError
		if errors.As(err, &ure) && ure.StatusCode == http.StatusTooManyRequests {
			var out OperatorHealthReply
			if json.Unmarshal([]byte(ure.Body), &out) == nil {
				return &out, nil, err
			}
		}
		return nil, nil, err
	}
	defer resp.Body.Close()
	qm := &QueryMeta{RequestTime: rtt}
	if err := parseQueryMeta(resp.Header, qm); err != nil {
		return nil, nil, err
	}
	var out OperatorHealthReply
	if err := decodeBody(resp.Body, &out); err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}
