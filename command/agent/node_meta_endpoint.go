package agent

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/client"
)

// nodeMetaClient is the part of the agent's client that keeps the node's
// dynamic metadata.
type nodeMetaClient interface {
	NodeID() string
	NodeMeta() *client.NodeMeta
	ApplyNodeMeta(changes map[string]*string) (*client.NodeMeta, error)
}

// nodeMetaNeed: node read to read the metadata, node write to change it.
var nodeMetaNeed = readWrite(nodeReadNeed, nodeWriteNeed)

// clientMetadataRequest serves /v1/client/metadata: GET reads this
// agent's node's metadata (static, dynamic and the merge the node
// registers), PUT/POST applies dynamic changes ({"NodeID","Meta":{k:v or
// null}}). Only the agent running the node answers: a node_id naming
// another node is not found here.
func (s *HTTPServer) clientMetadataRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	nodeID := r.URL.Query().Get("node_id")
	var body api.NodeMetaApplyRequest
	if r.Method != http.MethodGet {
		if err := decodeBody(r, &body); err != nil {
			return nil, err
		}
		if body.Meta == nil {
			return nil, codedError(http.StatusBadRequest, "missing required Meta object")
		}
		if body.NodeID != "" {
			nodeID = body.NodeID
		}
	}
	c, err := s.nodeMetaClient(nodeID)
	if err != nil {
		return nil, err
	}
	if r.Method == http.MethodGet {
		return nodeMetaResponse(c.NodeMeta()), nil
	}
	meta, err := c.ApplyNodeMeta(body.Meta)
	if err != nil {
		return nil, clientError(err)
	}
	return nodeMetaResponse(meta), nil
}

// nodeMetaClient is the agent's client when nodeID is empty or names its
// node.
func (s *HTTPServer) nodeMetaClient(nodeID string) (nodeMetaClient, error) {
	return localNodeClient[nodeMetaClient](s, nodeID, "node metadata")
}

// localNodeClient is the agent's client, as the part T a node endpoint
// uses, when nodeID is empty or names its node; what names what the
// endpoint answers, for the refusal of an agent without a client.
func localNodeClient[T interface{ NodeID() string }](s *HTTPServer, nodeID, what string) (T, error) {
	var zero T
	c, ok := s.cfg.Client.(T)
	switch {
	case !ok && nodeID == "":
		return zero, codedError(http.StatusBadRequest, "No local Node and node_id not provided")
	case !ok:
		return zero, codedError(http.StatusNotImplemented,
			fmt.Sprintf("this agent runs no client; %s is answered by the agent running the node", what))
	case nodeID != "" && !strings.EqualFold(nodeID, c.NodeID()):
		return zero, codedError(http.StatusNotFound, fmt.Sprintf("Unknown node %q", nodeID))
	}
	return c, nil
}

func nodeMetaResponse(m *client.NodeMeta) *api.NodeMetaResponse {
	return &api.NodeMetaResponse{Meta: m.Meta, Dynamic: m.Dynamic, Static: m.Static}
}
