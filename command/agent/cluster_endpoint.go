package agent

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"

	"github.com/opennomad/nomad/nomad"
	"github.com/opennomad/nomad/structs"
)

// ClusterServer is what a server agent offers for cluster membership and
// snapshots, besides LocalServer. The HTTP handlers find it on
// HTTPServerConfig.Server by type assertion; an agent without it answers
// these endpoints with 501. Methods are called from request goroutines,
// concurrently.
type ClusterServer interface {
	// Join contacts the gossip members at addrs ("host:port" of serf
	// ports) and returns how many answered.
	Join(addrs []string) (int, error)
	// ForceLeave marks a failed server as left; prune also drops it
	// from the member list at once.
	ForceLeave(node string, prune bool) error
	// SnapshotSave writes a snapshot archive to w, calling onIndex with
	// its Raft index before the first byte; see nomad.Server. The
	// server checks the caller's token (the streams bypass the RPC
	// registry).
	SnapshotSave(w io.Writer, token string, stale bool, onIndex func(uint64)) error
	// SnapshotRestore replaces the cluster state with the archive in r,
	// for a management token.
	SnapshotRestore(r io.Reader, token string) error
}

// clusterServer returns the agent's ClusterServer, or the error that
// answers when there is none.
func (s *HTTPServer) clusterServer() (ClusterServer, error) {
	if s.cfg.Server == nil {
		return nil, codedError(http.StatusBadRequest, "Server only endpoint")
	}
	cs, ok := s.cfg.Server.(ClusterServer)
	if !ok {
		return nil, codedError(http.StatusNotImplemented, "this server does not support cluster membership operations")
	}
	return cs, nil
}

// joinResult answers PUT /v1/agent/join as Nomad does: the error, if
// any, travels in the body with status 200.
type joinResult struct {
	NumJoined int    `json:"num_joined"`
	Error     string `json:"error"`
}

// agentJoinRequest serves PUT/POST /v1/agent/join?address=...: join the
// server's gossip to the members at the addresses.
func (s *HTTPServer) agentJoinRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		return nil, errInvalidMethod
	}
	cs, err := s.clusterServer()
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, a := range r.URL.Query()["address"] {
		host, port, err := splitHostPortDefault(a, DefaultSerfPort)
		if err != nil {
			return nil, codedError(http.StatusBadRequest, err.Error())
		}
		addrs = append(addrs, net.JoinHostPort(host, strconv.Itoa(port)))
	}
	if len(addrs) == 0 {
		return nil, codedError(http.StatusBadRequest, "missing address to join")
	}
	n, err := cs.Join(addrs)
	// A join that failed is answered in the body, as Nomad does; one this
	// agent cannot attempt at all is refused.
	if refused := refusedMembership(err); refused != nil {
		return nil, refused
	}
	res := joinResult{NumJoined: n}
	if err != nil {
		res.Error = err.Error()
	}
	return res, nil
}

// agentForceLeaveRequest serves PUT/POST /v1/agent/force-leave?node=.
func (s *HTTPServer) agentForceLeaveRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		return nil, errInvalidMethod
	}
	cs, err := s.clusterServer()
	if err != nil {
		return nil, err
	}
	node := r.URL.Query().Get("node")
	if node == "" {
		return nil, codedError(http.StatusBadRequest, "missing node to force leave")
	}
	prune, err := boolParam(r, "prune")
	if err != nil {
		return nil, err
	}
	err = cs.ForceLeave(node, prune)
	if refused := refusedMembership(err); refused != nil {
		return nil, refused
	}
	return nil, err
}

// refusedMembership returns err as a 400 when it says this agent takes
// part in no gossip (a dev agent is self-contained): the caller asked
// for something this agent cannot do, which is not a failure of the
// operation. Otherwise it returns nil.
func refusedMembership(err error) error {
	if errors.Is(err, nomad.ErrNoGossip) {
		return structs.WithKind(structs.ErrInvalid, err)
	}
	return nil
}

// operatorRaftPeerRequest serves DELETE /v1/operator/raft/peer?id=: remove
// a server from the Raft configuration. Raft names servers by ID, so
// ?address= is refused.
func (s *HTTPServer) operatorRaftPeerRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if r.Method != http.MethodDelete {
		return nil, errInvalidMethod
	}
	q := r.URL.Query()
	if q.Get("address") != "" {
		return nil, codedError(http.StatusBadRequest, "removing a peer by address is not supported; use ?id=")
	}
	args := structs.RaftPeerByIDRequest{ID: q.Get("id")}
	if args.ID == "" {
		return nil, codedError(http.StatusBadRequest, "missing peer id to remove")
	}
	s.parseWriteRequest(r, &args.WriteRequest)
	var reply structs.GenericResponse
	if err := s.rpc.RPC("Operator.RaftRemovePeerByID", &args, &reply); err != nil {
		return nil, err
	}
	setIndex(w, reply.Index)
	return nil, nil
}

// operatorSnapshotRequest serves GET /v1/operator/snapshot (stream an
// archive of the state; ?stale lets this server take it) and PUT (restore
// one from the body).
func (s *HTTPServer) operatorSnapshotRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	cs, err := s.clusterServer()
	if err != nil {
		return nil, err
	}
	if err := s.localRegion(r); err != nil {
		return nil, err
	}
	switch r.Method {
	case http.MethodGet:
		var q structs.QueryOptions
		if err := s.parseQueryOptions(r, &q); err != nil {
			return nil, err
		}
		return nil, s.sendSnapshot(w, cs, &q)
	case http.MethodPut, http.MethodPost:
		return nil, cs.SnapshotRestore(r.Body, authToken(r))
	}
	return nil, errInvalidMethod
}

// sendSnapshot answers a snapshot save. The archive is first written to a
// temporary file while its SHA-256 is computed, because Nomad's clients
// (its api package and CLI) refuse a snapshot without a `Digest:
// sha-256=<base64>` header and check the body against it; a header must
// precede the body, so the archive cannot be streamed as it is made.
func (s *HTTPServer) sendSnapshot(w http.ResponseWriter, cs ClusterServer, q *structs.QueryOptions) error {
	tmp, err := os.CreateTemp("", "nomad-snapshot-*")
	if err != nil {
		return fmt.Errorf("snapshot: temporary file: %w", err)
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}()
	sum := sha256.New()
	var index uint64
	if err := cs.SnapshotSave(io.MultiWriter(tmp, sum), q.AuthToken, q.AllowStale, func(i uint64) { index = i }); err != nil {
		return err
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	// The archive is gzip already.
	sendUncompressed(w)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.Header().Set("Digest", "sha-256="+base64.StdEncoding.EncodeToString(sum.Sum(nil)))
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(index, 10))
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, tmp); err != nil {
		// The client went away mid-body; its digest check fails.
		s.logger.Warn("snapshot: sending the archive failed", "error", err)
	}
	return nil
}
