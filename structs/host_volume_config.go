package structs

import (
	"fmt"
	"maps"
	"path/filepath"
)

// ClientHostVolumeConfig is a host volume a node offers: a directory of
// the host that group `volume` blocks of type "host" may mount by name.
// Static ones come from the client's `host_volume` blocks; dynamic ones,
// made through the host volume API, carry their volume's ID.
type ClientHostVolumeConfig struct {
	Name     string
	Path     string
	ReadOnly bool
	// ID is set for dynamic host volumes only.
	ID string
}

// Copy returns a copy.
func (v *ClientHostVolumeConfig) Copy() *ClientHostVolumeConfig {
	if v == nil {
		return nil
	}
	c := *v
	return &c
}

// Validate checks one volume of a client's configuration.
func (v *ClientHostVolumeConfig) Validate() error {
	switch {
	case v.Name == "":
		return fmt.Errorf("host_volume: a name is required: %w", ErrInvalid)
	case v.Path == "":
		return fmt.Errorf("host_volume %q: path is required: %w", v.Name, ErrInvalid)
	case !filepath.IsAbs(v.Path):
		return fmt.Errorf("host_volume %q: path %q must be absolute: %w", v.Name, v.Path, ErrInvalid)
	}
	return nil
}

// CopyHostVolumes deep-copies a node's host volumes.
func CopyHostVolumes(in map[string]*ClientHostVolumeConfig) map[string]*ClientHostVolumeConfig {
	if in == nil {
		return nil
	}
	out := make(map[string]*ClientHostVolumeConfig, len(in))
	for k, v := range in {
		out[k] = v.Copy()
	}
	return out
}

// SameHostVolumes reports whether two nodes offer the same volumes, as
// feasibility reads them.
func SameHostVolumes(a, b map[string]*ClientHostVolumeConfig) bool {
	return maps.EqualFunc(a, b, func(x, y *ClientHostVolumeConfig) bool {
		if x == nil || y == nil {
			return x == y
		}
		return *x == *y
	})
}
