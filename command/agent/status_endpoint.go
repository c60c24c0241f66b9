package agent

import (
	"net/http"

	"github.com/opennomad/nomad/structs"
)

// statusLeaderRequest serves GET /v1/status/leader: the leader's RPC
// address as a JSON string, "" when there is none.
func (s *HTTPServer) statusLeaderRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	var leader string
	if err := s.genericRead(r, "Status.Leader", &leader); err != nil {
		return nil, err
	}
	return leader, nil
}

// statusPeersRequest serves GET /v1/status/peers: the RPC addresses of
// the Raft peers.
func (s *HTTPServer) statusPeersRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	var peers []string
	if err := s.genericRead(r, "Status.Peers", &peers); err != nil {
		return nil, err
	}
	return nonNil(peers), nil
}

// regionsRequest serves GET /v1/regions.
func (s *HTTPServer) regionsRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	var regions []string
	if err := s.genericRead(r, "Region.List", &regions); err != nil {
		return nil, err
	}
	return nonNil(regions), nil
}

// genericRead performs a GET whose RPC takes only the query options.
func (s *HTTPServer) genericRead(r *http.Request, method string, reply interface{}) error {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return err
	}
	args := structs.GenericRequest{}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return err
	}
	return s.rpc.RPC(method, &args, reply)
}
