package api

import (
	"errors"
	"net/http"
	"net/url"
)

// joinResponse answers PUT /v1/agent/join.
type joinResponse struct {
	NumJoined int    `json:"num_joined"`
	Error     string `json:"error"`
}

// Join asks the agent's server to join the gossip pool through the
// servers at addrs ("host" or "host:port" of their serf ports) and
// returns how many answered.
func (a *Agent) Join(addrs ...string) (int, error) {
	v := url.Values{}
	for _, addr := range addrs {
		v.Add("address", addr)
	}
	var resp joinResponse
	if _, err := a.client.write(http.MethodPut, "/v1/agent/join?"+v.Encode(), nil, &resp, nil); err != nil {
		return 0, err
	}
	if resp.Error != "" {
		return resp.NumJoined, errors.New(resp.Error)
	}
	return resp.NumJoined, nil
}

// ForceLeave marks a failed server as having left, so the leader drops it
// from Raft at once. node is its member name ("node.region") or node
// name.
func (a *Agent) ForceLeave(node string) error {
	_, err := a.client.write(http.MethodPut, "/v1/agent/force-leave?node="+url.QueryEscape(node), nil, nil, nil)
	return err
}
