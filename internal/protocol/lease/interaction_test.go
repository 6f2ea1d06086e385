package lease_test

import (
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/wire"
)

// TestInteraction runs the step-by-step scripts in testdata
// (simtest.Interaction): a reader sees each message of a lease grant, a
// master election and the writes and reads around them.
func TestInteraction(t *testing.T) {
	simtest.RunInteractions(t, "testdata/*.txt", map[string]func(*simtest.Interaction, *datadriven.TestData) string{
		// master KEY: the node the key's mastership starts at.
		"master": func(in *simtest.Interaction, td *datadriven.TestData) string {
			ks := in.Keyspace().(interface{ Master(string) wire.NodeID })
			return simtest.Node(ks.Master(td.CmdArgs[0].Key))
		},
	})
}
