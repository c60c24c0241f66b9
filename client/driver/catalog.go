package driver

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/opennomad/nomad/structs"
)

// Catalog is the set of drivers a client offers, by name. It is built
// once at startup and read-only afterwards.
type Catalog map[string]Driver

// NewCatalog indexes drivers by Name and rejects duplicates.
func NewCatalog(drivers ...Driver) (Catalog, error) {
	c := Catalog{}
	for _, d := range drivers {
		if _, dup := c[d.Name()]; dup {
			return nil, fmt.Errorf("driver %q registered twice", d.Name())
		}
		c[d.Name()] = d
	}
	return c, nil
}

// Lookup returns the driver or an error naming the missing one.
func (c Catalog) Lookup(name string) (Driver, error) {
	d, ok := c[name]
	if !ok {
		return nil, fmt.Errorf("driver %q is not available on this client (have %v)", name, slices.Sorted(maps.Keys(c)))
	}
	return d, nil
}

// Fingerprint asks every driver for its health, stamped with now.
func (c Catalog) Fingerprint(now time.Time) map[string]*structs.DriverInfo {
	out := make(map[string]*structs.DriverInfo, len(c))
	for name, d := range c {
		info := d.Fingerprint()
		if info == nil {
			info = &structs.DriverInfo{}
		}
		info.UpdateTime = now
		out[name] = info
	}
	return out
}
