package command

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"

	"github.com/opennomad/nomad/api"
)

// volumeSpec is a volume specification file as Nomad writes it for
// `nomad volume create|register`; only type "host" is served.
type volumeSpec struct {
	ID          string `hcl:"id,optional"`
	Namespace   string `hcl:"namespace,optional"`
	Name        string `hcl:"name"`
	Type        string `hcl:"type"`
	PluginID    string `hcl:"plugin_id,optional"`
	NodeID      string `hcl:"node_id,optional"`
	NodePool    string `hcl:"node_pool,optional"`
	HostPath    string `hcl:"host_path,optional"`
	CapacityMin string `hcl:"capacity_min,optional"`
	CapacityMax string `hcl:"capacity_max,optional"`

	Capabilities []struct {
		AccessMode     string `hcl:"access_mode"`
		AttachmentMode string `hcl:"attachment_mode"`
	} `hcl:"capability,block"`
	// Constraint targets are read as written: "${attr.kernel.name}" is a
	// node attribute for the servers to read, not HCL to interpolate.
	Constraints []struct {
		Attribute hcl.Expression `hcl:"attribute,optional"`
		Operator  string         `hcl:"operator,optional"`
		Value     hcl.Expression `hcl:"value,optional"`
	} `hcl:"constraint,block"`
	Parameters *struct {
		Body hcl.Body `hcl:",remain"`
	} `hcl:"parameters,block"`
}

// errCSIVolumes refuses CSI volume specifications and flags.
var errCSIVolumes = fmt.Errorf("CSI volumes are not supported by this server (host volumes are: type = \"host\")")

// parseVolumeSpec reads a volume specification: HCL, or JSON (the API's
// HostVolume) for a ".json" file.
func parseVolumeSpec(filename string, data []byte) (*api.HostVolume, error) {
	if strings.HasSuffix(filename, ".json") {
		var v struct {
			api.HostVolume
			Type string
		}
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, err
		}
		if err := checkVolumeType(v.Type); err != nil {
			return nil, err
		}
		return &v.HostVolume, nil
	}
	f, diags := hclparse.NewParser().ParseHCL(data, filename)
	if diags.HasErrors() {
		return nil, diags
	}
	// The type decides which schema applies: look at it first.
	if attrs, _ := f.Body.JustAttributes(); attrs != nil {
		if a, ok := attrs["type"]; ok {
			var typ string
			if diags := gohcl.DecodeExpression(a.Expr, nil, &typ); !diags.HasErrors() {
				if err := checkVolumeType(typ); err != nil {
					return nil, err
				}
			}
		}
	}
	var spec volumeSpec
	if diags := gohcl.DecodeBody(f.Body, nil, &spec); diags.HasErrors() {
		return nil, diags
	}
	if err := checkVolumeType(spec.Type); err != nil {
		return nil, err
	}
	v := &api.HostVolume{ID: spec.ID, Namespace: spec.Namespace, Name: spec.Name, PluginID: spec.PluginID,
		NodeID: spec.NodeID, NodePool: spec.NodePool, HostPath: spec.HostPath}
	for _, c := range []struct {
		text string
		into *int64
		key  string
	}{{spec.CapacityMin, &v.RequestedCapacityMinBytes, "capacity_min"}, {spec.CapacityMax, &v.RequestedCapacityMaxBytes, "capacity_max"}} {
		if c.text == "" {
			continue
		}
		n, err := humanize.ParseBytes(c.text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.key, err)
		}
		*c.into = int64(n)
	}
	for _, c := range spec.Capabilities {
		v.RequestedCapabilities = append(v.RequestedCapabilities, &api.HostVolumeCapability{
			AccessMode: api.HostVolumeAccessMode(c.AccessMode), AttachmentMode: api.HostVolumeAttachmentMode(c.AttachmentMode)})
	}
	for _, c := range spec.Constraints {
		op := c.Operator
		if op == "" {
			op = "="
		}
		v.Constraints = append(v.Constraints, &api.Constraint{LTarget: literal(c.Attribute, data),
			RTarget: literal(c.Value, data), Operand: op})
	}
	if spec.Parameters != nil {
		params := map[string]string{}
		if diags := gohcl.DecodeBody(spec.Parameters.Body, nil, &params); diags.HasErrors() {
			return nil, diags
		}
		v.Parameters = params
	}
	return v, nil
}

func checkVolumeType(typ string) error {
	switch typ {
	case "host":
		return nil
	case "csi":
		return errCSIVolumes
	}
	return fmt.Errorf("type %q: must be \"host\" (or \"csi\", not supported by this server)", typ)
}

// literal is the text of a quoted string expression as written, without
// evaluating any "${...}" in it; "" for an absent attribute.
func literal(expr hcl.Expression, src []byte) string {
	if expr == nil {
		return ""
	}
	r := expr.Range()
	if r.Empty() || r.End.Byte > len(src) {
		return ""
	}
	text := strings.TrimSpace(string(r.SliceBytes(src)))
	if unq, err := strconv.Unquote(text); err == nil {
		return unq
	}
	return strings.Trim(text, `"`)
}
