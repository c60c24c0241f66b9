package api

import "time"

// Vault gives a task a Vault token (the `vault` block).
type Vault struct {
	Policies             []string `hcl:"policies,optional"`
	Role                 string   `hcl:"role,optional"`
	Namespace            *string  `hcl:"namespace,optional"`
	Cluster              string   `hcl:"cluster,optional"`
	Env                  *bool    `hcl:"env,optional"`
	DisableFile          *bool    `hcl:"disable_file,optional"`
	ChangeMode           *string  `hcl:"change_mode,optional"`
	ChangeSignal         *string  `hcl:"change_signal,optional"`
	AllowTokenExpiration *bool    `hcl:"allow_token_expiration,optional"`
}

// Canonicalize fills Nomad's Vault defaults.
func (v *Vault) Canonicalize() {
	if v.Env == nil {
		v.Env = new(true)
	}
	if v.DisableFile == nil {
		v.DisableFile = new(false)
	}
	if v.Namespace == nil {
		v.Namespace = new("")
	}
	if v.Cluster == "" {
		v.Cluster = "default"
	}
	if v.ChangeMode == nil {
		v.ChangeMode = new("restart")
	}
	if v.ChangeSignal == nil {
		v.ChangeSignal = new("SIGHUP")
	}
	if v.AllowTokenExpiration == nil {
		v.AllowTokenExpiration = new(false)
	}
}

// Consul selects the Consul namespace, cluster and partition of a group or
// task (the `consul` block).
type Consul struct {
	Namespace string `hcl:"namespace,optional"`
	Cluster   string `hcl:"cluster,optional"`
	Partition string `hcl:"partition,optional"`
}

// Canonicalize defaults the cluster to "default".
func (c *Consul) Canonicalize() {
	if c.Cluster == "" {
		c.Cluster = "default"
	}
}

// WorkloadIdentity exposes a signed identity to a task (the `identity`
// block).
type WorkloadIdentity struct {
	Name         string        `hcl:"name,optional"`
	Audience     []string      `hcl:"aud,optional"`
	ChangeMode   string        `hcl:"change_mode,optional"`
	ChangeSignal string        `hcl:"change_signal,optional"`
	Env          bool          `hcl:"env,optional"`
	File         bool          `hcl:"file,optional"`
	Filepath     string        `hcl:"filepath,optional"`
	ServiceName  string        `hcl:"service_name,optional"`
	TTL          time.Duration `hcl:"ttl,optional"`
	ExtraClaims  []string      `hcl:"extra_claims,optional"`
}
