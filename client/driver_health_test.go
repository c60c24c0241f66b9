package client

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/structs"
)

// flakyDriver is a driver whose health the test sets; it runs nothing.
type flakyDriver struct{ healthy atomic.Bool }

func (d *flakyDriver) Name() string { return "flaky" }
func (d *flakyDriver) Fingerprint() *structs.DriverInfo {
	if !d.healthy.Load() {
		return &structs.DriverInfo{Detected: true, HealthDescription: "not yet"}
	}
	return &structs.DriverInfo{Detected: true, Healthy: true, HealthDescription: "Healthy",
		Attributes: map[string]string{"driver.flaky.version": "2"}}
}
func (d *flakyDriver) Start(context.Context, *driver.TaskConfig) (driver.Handle, error) {
	return nil, driver.ErrDisabled
}
func (d *flakyDriver) Recover(*driver.TaskConfig, *driver.HandleState) (driver.Handle, error) {
	return nil, driver.ErrTaskNotFound
}

func TestClient_DriverHealthChangeReregisters(t *testing.T) {
	srv := testServer(t, nil)
	c := testClient(t, testClientConfig(t, local(srv)))
	eventually(t, "ready", func() bool { return nodeStatus(t, srv, c.NodeID()) == structs.NodeStatusReady })

	// The periodic check is minutes away; the test drives it by hand.
	flaky := &flakyDriver{}
	cat, err := driver.NewCatalog(flaky)
	must.NoError(t, err)
	c.drivers = cat
	must.True(t, c.refreshDrivers())
	must.False(t, c.refreshDrivers()) // nothing new
	flaky.healthy.Store(true)
	must.True(t, c.refreshDrivers())
	_, err = c.register()
	must.NoError(t, err)

	n, err := srv.State().NodeByID(nil, c.NodeID())
	must.NoError(t, err)
	must.Eq(t, "1", n.Attributes["driver.flaky"])
	must.Eq(t, "2", n.Attributes["driver.flaky.version"])
	must.Eq(t, structs.NodeStatusReady, n.Status) // registering keeps the status
}

func TestDriversChanged(t *testing.T) {
	healthy := &structs.DriverInfo{Detected: true, Healthy: true, Attributes: map[string]string{"a": "1"}}
	cases := []struct {
		name string
		a, b map[string]*structs.DriverInfo
		want bool
	}{
		{"same", map[string]*structs.DriverInfo{"x": healthy}, map[string]*structs.DriverInfo{"x": healthy.Copy()}, false},
		{"check time only", map[string]*structs.DriverInfo{"x": healthy},
			map[string]*structs.DriverInfo{"x": {Detected: true, Healthy: true, Attributes: map[string]string{"a": "1"}, UpdateTime: time.Unix(1e9, 0)}}, false},
		{"health", map[string]*structs.DriverInfo{"x": healthy}, map[string]*structs.DriverInfo{"x": {Detected: true, Attributes: map[string]string{"a": "1"}}}, true},
		{"attribute", map[string]*structs.DriverInfo{"x": healthy}, map[string]*structs.DriverInfo{"x": {Detected: true, Healthy: true, Attributes: map[string]string{"a": "2"}}}, true},
		{"new driver", map[string]*structs.DriverInfo{"x": healthy}, map[string]*structs.DriverInfo{"x": healthy, "y": healthy}, true},
	}
	for _, tc := range cases {
		if got := driversChanged(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: driversChanged = %v", tc.name, got)
		}
	}
}
