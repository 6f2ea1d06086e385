package protocol_test

import (
	"strings"
	"testing"

	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// TestCondRefusal: which keyspaces apply conditional writes — lease
// always, quorum on a single-node cluster (a single-node server's default
// keyspace) — and that every other refusal is ErrInvalid naming both ways.
func TestCondRefusal(t *testing.T) {
	single, three := refusalTopologies(t)
	for _, c := range []struct {
		name    string
		spec    protocol.Spec
		tp      *topo.Topology
		applies bool
	}{
		{"lease", protocol.Spec{Protocol: "lease"}, three, true},
		{"quorum, single node", protocol.Spec{}, single, true},
		{"quorum, three regions", protocol.Spec{Protocol: "quorum", Set: []string{"read=ONE", "write=ONE"}}, three, false},
		{"quorum, one replica in one of three regions", protocol.Spec{Protocol: "quorum", Set: []string{"replicas_per_region=[1, 0, 0]", "read=ONE", "write=ONE"}}, three, false},
		{"meteor", protocol.Spec{Protocol: "meteor"}, three, false},
	} {
		d, ks, err := c.spec.Build(c.tp)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ref := protocol.CondRefusal(d, ks)
		switch {
		case c.applies && ref != nil:
			t.Errorf("%s: refused conditional writes (%v); want them applied", c.name, ref)
		case !c.applies && ref == nil:
			t.Errorf("%s: applies conditional writes; want a refusal", c.name)
		case !c.applies && (ref.Code != wire.ErrInvalid || !strings.Contains(ref.Msg, "lease (every setting") ||
			!strings.Contains(ref.Msg, "quorum on a single-node cluster") || !strings.Contains(ref.Msg, "rmw: last_writer_wins")):
			t.Errorf("%s: refusal %v; want ErrInvalid naming lease, quorum on a single-node cluster and rmw: last_writer_wins", c.name, ref)
		}
	}
}

// TestTxnRefusal: which keyspaces run transactions — quorum on a
// single-node cluster — and that every other refusal is ErrInvalid naming
// the registered protocols that run them.
func TestTxnRefusal(t *testing.T) {
	single, three := refusalTopologies(t)
	for _, c := range []struct {
		name string
		spec protocol.Spec
		tp   *topo.Topology
		runs bool
	}{
		{"quorum, single node", protocol.Spec{}, single, true},
		{"quorum, three regions", protocol.Spec{Protocol: "quorum"}, three, false},
		{"lease", protocol.Spec{Protocol: "lease"}, three, false},
	} {
		d, ks, err := c.spec.Build(c.tp)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ref := protocol.TxnRefusal(d, ks)
		switch {
		case c.runs && ref != nil:
			t.Errorf("%s: refused transactions (%v); want them run", c.name, ref)
		case !c.runs && ref == nil:
			t.Errorf("%s: runs transactions; want a refusal", c.name)
		case !c.runs && (ref.Code != wire.ErrInvalid || !strings.Contains(ref.Msg, "quorum on a single-node cluster")):
			t.Errorf("%s: refusal %v; want ErrInvalid naming quorum on a single-node cluster", c.name, ref)
		}
	}
}

// refusalTopologies are a single-node cluster and three regions of one
// node each.
func refusalTopologies(t *testing.T) (single, three *topo.Topology) {
	t.Helper()
	one, err := topo.Parse([]byte("name: one\nnodes_per_region: 1\nregions: [{name: here}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := topo.Preset("meteor3")
	if err != nil {
		t.Fatal(err)
	}
	return topo.NewTopology(one), topo.NewTopology(w)
}
