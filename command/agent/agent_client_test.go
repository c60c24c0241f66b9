package agent

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/client"
)

// A dev agent offers mock_driver, as a development build of Nomad does,
// unless its options turn it off; other agents do not.
func TestClientConfig_DevModeOffersMockDriver(t *testing.T) {
	dev := DevConfig()
	must.Eq(t, "true", clientConfig(dev, t.TempDir()).Options[client.OptionMockDriverEnable])

	dev.Client.Options = map[string]string{client.OptionMockDriverEnable: "false"}
	must.Eq(t, "false", clientConfig(dev, t.TempDir()).Options[client.OptionMockDriverEnable])

	plain := DefaultConfig()
	_, set := clientConfig(plain, t.TempDir()).Options[client.OptionMockDriverEnable]
	must.False(t, set)
}
