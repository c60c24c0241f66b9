package agent

import "errors"

// startServer builds the in-process server from the agent configuration.
func (a *Agent) startServer() (serverBackend, error) {
	return nil, errors.New("the server is not part of this build yet")
}
