package agent

import (
	"fmt"
	"net"
	"strconv"

	"github.com/opennomad/nomad/nomad"
)

// listenAddr is where a server listener binds: its addresses setting,
// else bind_addr, on port.
func listenAddr(c *Config, address string, port int) string {
	host := address
	if host == "" {
		host = c.BindAddr
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// serfAddrs completes join addresses with the default serf port.
func serfAddrs(addrs []string) []string {
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		host, port, err := splitHostPortDefault(a, DefaultSerfPort)
		if err != nil {
			// Validation already refused it.
			continue
		}
		out = append(out, net.JoinHostPort(host, strconv.Itoa(port)))
	}
	return out
}

// joinServers joins the server to its peers' gossip: server_join's
// start_join addresses at once (the agent does not start when none
// answers), its retry_join addresses in the background every
// retry_interval. When retry_max attempts all fail, the agent stops with
// an error, as Nomad's does.
func (a *Agent) joinServers(srv *nomad.Server) error {
	sj := a.config.Server.ServerJoin
	if len(sj.StartJoin) > 0 {
		if _, err := srv.Join(serfAddrs(sj.StartJoin)); err != nil {
			return fmt.Errorf("server_join.start_join: %w", err)
		}
	}
	if len(sj.RetryJoin) == 0 {
		return nil
	}
	done, err := srv.RetryJoin(serfAddrs(sj.RetryJoin), sj.RetryInterval, sj.RetryMax)
	if err != nil {
		return fmt.Errorf("server_join.retry_join: %w", err)
	}
	go func() {
		if err, ok := <-done; ok && err != nil {
			a.fail(fmt.Errorf("server_join.retry_join: %w", err))
		}
	}()
	return nil
}

// fail reports an error the agent cannot run on with; the agent command
// stops the agent and exits with it. Only the first is kept.
func (a *Agent) fail(err error) {
	a.logger.Error("agent cannot continue", "error", err)
	select {
	case a.fatal <- err:
	default:
	}
}

// Fatal delivers an error after which the agent cannot run on (retry_join
// exhausted its attempts); the caller should shut the agent down.
func (a *Agent) Fatal() <-chan error { return a.fatal }
