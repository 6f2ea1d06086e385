package fastpaxos_test

import (
	"strings"
	"testing"

	"github.com/lightcone/lightcone/internal/protocol/cric"
	"github.com/lightcone/lightcone/internal/protocol/fastpaxos"
	"github.com/lightcone/lightcone/internal/protocol/vmpaxos"
	"github.com/lightcone/lightcone/internal/protocol/vmpaxos/vmpaxostest"
	"github.com/lightcone/lightcone/internal/topo"
)

// TestCricOnlySettingsRefused: cric's settings that only its
// storage-service requests use are refused, not silently ignored.
func TestCricOnlySettingsRefused(t *testing.T) {
	tp := topo.NewTopology(vmpaxostest.World(t))
	if _, err := vmpaxos.NewKeyspace(fastpaxos.Name, vmpaxos.ModeLogic, tp, cric.Config{}); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	for _, c := range []cric.Config{{ColdWrites: cric.ColdCreate}, {ReadDataCopies: 2}, {ProposeAssistants: true}} {
		if _, err := vmpaxos.NewKeyspace(fastpaxos.Name, vmpaxos.ModeLogic, tp, c); err == nil || !strings.Contains(err.Error(), "cric") {
			t.Errorf("%+v: err = %v; want a refusal naming cric", c, err)
		}
	}
}
