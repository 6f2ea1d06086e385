package lease

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
)

// Name is the protocol's name in configuration.
const Name = "lease"

func init() {
	protocol.Register(protocol.Definition{
		Name:         Name,
		Title:        "GlobLease",
		Summary:      "per-key masters that move to their writers; leases for local sequentially consistent reads",
		NewSettings:  func() any { return new(Config) },
		Build:        build,
		MessageTypes: MessageTypes(),
		PrimeReads:   true,
		Conditional:  "(every setting: the key's master checks the condition as it orders the write)",
		Demo: []protocol.Preset{
			// GlobLease's Table II lease length. A demo phase is shorter than
			// a lease, so a region holds a key's lease only after its first
			// read there: the demo primes every key's leases first.
			{Label: "GlobLease", Settings: "{lease_length: 60s}",
				Note: "reads are local once leases are held (primed with one read of every key per region); writes wait at the key's master for every lease holder"},
		},
	})
}

// registered is a lease keyspace as the registry sees it.
type registered struct{ *Keyspace }

func build(t *topo.Topology, settings any) (protocol.Keyspace, error) {
	ks, err := NewKeyspace(t, *settings.(*Config))
	if err != nil {
		return nil, err
	}
	return registered{ks}, nil
}

// OrdersWrites: every key's master orders its writes (doc.go,
// "Conditional writes").
func (k registered) OrdersWrites() bool { return true }

func (k registered) Settings() any { c := k.Config(); return &c }

// Model: GlobLease orders each key's writes at its master but makes them
// visible holder by holder, so it is sequentially consistent per key
// (doc.go, docs/design/lease.md).
func (k registered) Model() string { return "sequential-per-key" }

// ClockBound: the lease protocol assumes bounded drift (MaxDriftPPM), not
// bounded offset; a run's offsets do not matter, so no offset bound is
// claimed.
func (k registered) ClockBound() time.Duration { return 0 }

func (k registered) Describe() string {
	c := k.Config()
	mode := "active"
	if c.Passive {
		mode = "passive"
	}
	extra := ""
	if c.AutoMigrate {
		extra += fmt.Sprintf(" auto_migrate=%s/%g", c.MigrateWindow, c.MigrateThreshold)
	}
	if c.Affiliates > 0 {
		extra += fmt.Sprintf(" affiliates=%d", c.Affiliates)
	}
	return fmt.Sprintf("lease (GlobLease) lease=%s update=%s master_lease=%s max_drift=%gppm%s guarantee=sequential-per-key",
		c.LeaseLength, mode, c.MasterLease, c.MaxDriftPPM, extra)
}

// Floor: a read under a valid lease needs no network beyond the region. A
// write goes to the key's master and waits for a majority of the group;
// the master may be in any region, so the floor takes the best one.
func (k registered) Floor(region int, op protocol.Op, oneWay func(a, b int) time.Duration) time.Duration {
	if op == protocol.Read {
		return 0
	}
	n := len(k.topo.World.Regions)
	best := time.Duration(-1)
	for m := 0; m < n; m++ {
		var rtts []time.Duration
		for r := 0; r < n; r++ {
			if r != m {
				rtts = append(rtts, oneWay(m, r)+oneWay(r, m))
			}
		}
		slices.Sort(rtts)
		need := n/2 + 1 - 1 // acks beyond the master's own write
		var maj time.Duration
		if need > 0 {
			maj = rtts[need-1]
		}
		toMaster := oneWay(region, m) + oneWay(m, region)
		if m == region {
			toMaster = 0 // the gateway may be the master itself
		}
		if d := toMaster + maj; best < 0 || d < best {
			best = d
		}
	}
	return best
}

// Load: lease versions are ballot-major; loaded records precede every
// write.
// UserRecord implements protocol.Lister: a lease replica stores each key's
// latest version it has under the key itself; its own state lives under
// metaPrefix.
func (k registered) UserRecord(stored string, rec store.Record) (string, []byte, bool, bool) {
	if strings.HasPrefix(stored, metaPrefix) {
		return "", nil, false, false
	}
	return stored, rec.Value, !rec.Tombstone, true
}

func (k registered) Load(key string, rec store.Record) (string, store.Record) {
	rec.Version = LoadVersion()
	return key, rec
}

// Counters are the replica's counters and gauges (lightcone_lease_*).
func (r *Replica) Counters(now int64) []protocol.Counter {
	s := r.Stats(now)
	c, g := protocol.Count, protocol.Gauge
	return []protocol.Counter{
		c("renewals_total", "Lease renewals this node asked a master for.", s.Renewals),
		c("grants_total", "Leases this node granted as a key's master.", s.Grants),
		c("invalidations_total", "Lease holders an active write had to update or wait out, at this node as master.", s.Invalidations),
		c("confirms_total", "Master-lease confirmation rounds this node sent as master.", s.Confirms),
		c("elections_total", "Elections this node won.", s.Elections),
		c("migrations_total", "Migrations that made this node a key's master.", s.Migrations),
		c("rollbacks_total", "Migrations this node took back after the target failed to take over.", s.Rollbacks),
		c("affiliates_attached_total", "Affiliated nodes this node attached for hot keys.", s.Attached),
		c("affiliates_detached_total", "Affiliated nodes this node detached.", s.Detached),
		g("leases_held", "Valid leases this node holds.", s.LeasesHeld),
		g("masters_held", "Keys this node is master of (among those it has loaded).", s.MastersHeld),
	}
}
