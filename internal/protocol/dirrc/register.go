package dirrc

import (
	"fmt"
	"time"

	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
)

// Name is the protocol's name in configuration.
const Name = "rc"

func init() {
	protocol.Register(protocol.Definition{
		Name:         Name,
		Title:        "directory-based release consistency (seed 002)",
		Summary:      "clients acquire and release rows; one frontend per region holds a row at a time under a central directory's FIFO queue, syncing lazily from the last holder",
		NewSettings:  func() any { return new(Config) },
		Build:        build,
		MessageTypes: MessageTypes(),
		Locking:      true,
		Demo: []protocol.Preset{
			// The demo's default world has 500 ms one-way links: a
			// frontend's hold is servable for hold_lease from sending the
			// message the directory answered (doc.go, rule 6), so
			// hold_lease must well exceed the round trip to the directory
			// (the default 1s does not: holds would lapse as they are
			// granted); resends wait longer than a round trip; contended
			// rows queue for several round trips.
			{Label: "directory RC", Settings: "{hold_lease: 5s, acquire_timeout: 15s, resend_interval: 1500ms}",
				Note: "each operation is LC.ACQUIRE, the access, LC.RELEASE (measured together); an acquire asks the directory (in the last region) unless the region already holds the row"},
		},
	})
}

type registered struct{ *Keyspace }

func build(t *topo.Topology, settings any) (protocol.Keyspace, error) {
	ks, err := NewKeyspace(t, *settings.(*Config))
	if err != nil {
		return nil, err
	}
	return registered{ks}, nil
}

func (k registered) Settings() any { c := k.Config(); return &c }

// Model: release consistency as internal/check states it (doc.go,
// "Guarantee").
func (k registered) Model() string { return "release" }

// ClockBound: only drift is assumed (MaxDriftPPM), not offset.
func (k registered) ClockBound() time.Duration { return 0 }

func (k registered) Describe() string {
	c := k.Config()
	return fmt.Sprintf("rc (directory-based release consistency) directory=%s%s hold_lease=%s hold_timeout=%s max_drift=%gppm guarantee=release",
		c.DirectoryRegion, c.DescribeShards(), c.HoldLease, c.HoldTimeout, c.MaxDriftPPM)
}

// Floor: an access to a held row is local; the floor is that best case.
func (k registered) Floor(region int, op protocol.Op, oneWay func(a, b int) time.Duration) time.Duration {
	return 0
}

// Load: every frontend stores the preloaded row (the state before any
// grant, which every frontend agrees on).
func (k registered) Load(key string, rec store.Record) (string, store.Record) {
	return rowKey(key), rec
}
