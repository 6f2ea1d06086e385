package fastpaxos_test

import (
	"strings"
	"testing"

	"github.com/lightcone/lightcone/internal/protocol/cric"
	"github.com/lightcone/lightcone/internal/protocol/fastpaxos"
	"github.com/lightcone/lightcone/internal/protocol/vmpaxos"
	"github.com/lightcone/lightcone/internal/topo"
)

// TestCricOnlySettingsRefused: cric's settings that only its
// storage-service requests use are refused, not silently ignored.
func TestCricOnlySettingsRefused(t *testing.T) {
	w, err := topo.Parse([]byte(`
name: three
nodes_per_region: 1
regions:
  - {name: a, provider: sim, lat: 0, long: 0}
  - {name: b, provider: sim, lat: 0, long: 0}
  - {name: c, provider: sim, lat: 0, long: 0}
links:
  - {from: a, to: b, one_way_ms: 10}
  - {from: b, to: c, one_way_ms: 10}
  - {from: a, to: c, one_way_ms: 10}
`))
	if err != nil {
		t.Fatal(err)
	}
	tp := topo.NewTopology(w)
	if _, err := vmpaxos.NewKeyspace(fastpaxos.Name, vmpaxos.ModeLogic, tp, cric.Config{}); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	for _, c := range []cric.Config{{ColdWrites: cric.ColdCreate}, {ReadDataCopies: 2}, {ProposeAssistants: true}} {
		if _, err := vmpaxos.NewKeyspace(fastpaxos.Name, vmpaxos.ModeLogic, tp, c); err == nil || !strings.Contains(err.Error(), "cric") {
			t.Errorf("%+v: err = %v; want a refusal naming cric", c, err)
		}
	}
}
