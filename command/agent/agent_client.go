package agent

import (
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"

	"github.com/opennomad/nomad/client"
	"github.com/opennomad/nomad/nomad/rpcnet"
	"github.com/opennomad/nomad/structs"
)

// startClient builds the in-process client from the agent configuration
// and points it at the local server. A dev agent has no data_dir: its
// client keeps its state in a temporary directory removed at shutdown.
func (a *Agent) startClient() error {
	dataDir := a.config.DataDir
	if dataDir == "" {
		tmp, err := os.MkdirTemp("", "nomad-dev-client-")
		if err != nil {
			return fmt.Errorf("dev client data dir: %w", err)
		}
		a.clientTmpDir, dataDir = tmp, tmp
	}
	cfg := clientConfig(a.config, dataDir)
	if a.server != nil {
		cfg.Servers = []client.ServerEndpoint{{Name: "local", Conn: a.server}}
	} else {
		a.clientPool = rpcnet.NewPool(rpcnet.PoolConfig{Logger: a.logger, TLSWrap: a.rpcDialer()})
		cfg.DialServer = func(addr string) client.ServerEndpoint { return client.RemoteServer(a.clientPool, addr) }
		for _, addr := range clientServerAddrs(&a.config.Client) {
			cfg.Servers = append(cfg.Servers, cfg.DialServer(addr))
		}
	}
	cfg.Logger = a.logger
	c, err := client.NewClient(cfg)
	if err != nil {
		return err
	}
	a.client = c
	return nil
}

// clientServerAddrs are the RPC addresses a client-only agent starts
// with: client.servers, then the server_join addresses (tried in turn by
// the client's rotation), each with the default RPC port when it has
// none. Once a server answers, the client follows the servers' own list.
func clientServerAddrs(cl *ClientConfig) []string {
	var out []string
	for _, list := range [][]string{cl.Servers, cl.ServerJoin.StartJoin, cl.ServerJoin.RetryJoin} {
		for _, s := range list {
			host, port, err := splitHostPortDefault(s, DefaultRPCPort)
			if err != nil {
				continue
			}
			addr := net.JoinHostPort(host, strconv.Itoa(port))
			if !slices.Contains(out, addr) {
				out = append(out, addr)
			}
		}
	}
	return out
}

// clientConfig maps the agent's configuration onto the client's.
func clientConfig(c *Config, dataDir string) *client.Config {
	cl := &c.Client
	cfg := &client.Config{
		DataDir:           dataDir,
		StateDir:          cl.StateDir,
		AllocDir:          cl.AllocDir,
		Region:            c.Region,
		Datacenter:        c.Datacenter,
		NodeName:          c.Name,
		NodeClass:         cl.NodeClass,
		NodePool:          cl.NodePool,
		Meta:              maps.Clone(cl.Meta),
		Options:           maps.Clone(cl.Options),
		HTTPAddr:          advertisedHTTP(c),
		NetworkInterface:  cl.NetworkInterface,
		CPUTotalCompute:   cl.CPUTotalCompute,
		MemoryTotalMB:     cl.MemoryTotalMB,
		MinDynamicPort:    cl.MinDynamicPort,
		MaxDynamicPort:    cl.MaxDynamicPort,
		MaxKillTimeout:    cl.MaxKillTimeout,
		GCInterval:        cl.GCInterval,
		GCMaxAllocs:       cl.GCMaxAllocs,
		DisableRemoteExec: cl.DisableRemoteExec,
		DevMode:           c.DevMode,
		Reserved: &structs.NodeReservedResources{
			Cpu:      structs.NodeReservedCpuResources{CpuShares: int64(cl.Reserved.CPU)},
			Memory:   structs.NodeReservedMemoryResources{MemoryMB: int64(cl.Reserved.MemoryMB)},
			Disk:     structs.NodeReservedDiskResources{DiskMB: int64(cl.Reserved.DiskMB)},
			Networks: structs.NodeReservedNetworkResources{ReservedHostPorts: cl.Reserved.ReservedPorts},
		},
	}
	if c.DevMode {
		// As a development build of Nomad: a dev agent also offers
		// mock_driver, unless its options say otherwise.
		if cfg.Options == nil {
			cfg.Options = map[string]string{}
		}
		if _, set := cfg.Options[client.OptionMockDriverEnable]; !set {
			cfg.Options[client.OptionMockDriverEnable] = "true"
		}
	}
	if len(cl.HostVolumes) > 0 {
		cfg.HostVolumes = make(map[string]*structs.ClientHostVolumeConfig, len(cl.HostVolumes))
		for name, v := range cl.HostVolumes {
			if v != nil {
				cfg.HostVolumes[name] = &structs.ClientHostVolumeConfig{Name: name, Path: v.Path, ReadOnly: v.ReadOnly}
			}
		}
	}
	cfg.HostVolumesDir = cl.HostVolumesDir
	if len(c.Plugins) > 0 {
		cfg.Plugins = make(map[string]map[string]interface{}, len(c.Plugins))
		for name, p := range c.Plugins {
			if p != nil {
				cfg.Plugins[name] = maps.Clone(p.Config)
			}
		}
	}
	return cfg
}

// advertisedHTTP is the HTTP address other agents and users reach this
// one at: advertise.http when set, the listening address otherwise.
func advertisedHTTP(c *Config) string {
	if adv := c.Advertise.HTTP; adv != "" {
		if _, _, err := net.SplitHostPort(adv); err != nil {
			return net.JoinHostPort(adv, fmt.Sprint(c.Ports.HTTP))
		}
		return adv
	}
	return c.httpAddr()
}

// stopClient lets go of the client. A dev agent's state dies with it, so
// its tasks are stopped and its directory removed; any other agent leaves
// the tasks running for the client that starts on the same data_dir.
func (a *Agent) stopClient() error {
	if a.client == nil {
		return nil
	}
	if a.config.DevMode {
		err := a.client.Destroy()
		if a.clientTmpDir != "" {
			if rmErr := os.RemoveAll(a.clientTmpDir); rmErr != nil && err == nil {
				err = rmErr
			}
		}
		return err
	}
	err := a.client.Shutdown()
	if a.clientPool != nil {
		a.clientPool.Close()
	}
	return err
}
