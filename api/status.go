package api

import (
	"net/http"
	"sort"
)

// Status is the /v1/status endpoint group.
type Status struct {
	client *Client
}

// Status returns the status endpoint group.
func (c *Client) Status() *Status { return &Status{client: c} }

// Leader returns the RPC address of the region's leader, "" if none.
func (s *Status) Leader() (string, error) {
	var resp string
	if _, err := s.client.query("/v1/status/leader", &resp, nil); err != nil {
		return "", err
	}
	return resp, nil
}

// RegionLeader returns the leader's address of another region.
func (s *Status) RegionLeader(region string) (string, error) {
	var resp string
	if _, err := s.client.query("/v1/status/leader", &resp, &QueryOptions{Region: region}); err != nil {
		return "", err
	}
	return resp, nil
}

// Peers returns the RPC addresses of the Raft peers.
func (s *Status) Peers() ([]string, error) {
	var resp []string
	if _, err := s.client.query("/v1/status/peers", &resp, nil); err != nil {
		return nil, err
	}
	return resp, nil
}

// Regions is the /v1/regions endpoint group.
type Regions struct {
	client *Client
}

// Regions returns the regions endpoint group.
func (c *Client) Regions() *Regions { return &Regions{client: c} }

// List returns the known regions, sorted.
func (r *Regions) List() ([]string, error) {
	var resp []string
	if _, err := r.client.query("/v1/regions", &resp, nil); err != nil {
		return nil, err
	}
	sort.Strings(resp)
	return resp, nil
}

// System is the /v1/system endpoint group.
type System struct {
	client *Client
}

// System returns the system endpoint group.
func (c *Client) System() *System { return &System{client: c} }

// GarbageCollect asks the servers to run a full garbage collection now.
func (s *System) GarbageCollect() error {
	_, err := s.client.write(http.MethodPut, "/v1/system/gc", nil, nil, nil)
	return err
}

// ReconcileSummaries asks the servers to recompute every job's summary
// from its allocations.
func (s *System) ReconcileSummaries() error {
	_, err := s.client.write(http.MethodPut, "/v1/system/reconcile/summaries", nil, nil, nil)
	return err
}
