package meteor

import (
	"fmt"
	"strings"
	"time"

	"github.com/lightcone/lightcone/internal/ring"
	"github.com/lightcone/lightcone/internal/wire"
)

// Mode chooses the staleness bound θt a read tolerates (MeteorShower §4.2.5,
// "The Choice of θt").
type Mode uint8

const (
	// M1 is MeteorShower1: θt = 0 (the lower bound), less ε (doc.go).
	M1 Mode = iota + 1
	// M2 is MeteorShower2: θt = the write level's order statistic of the
	// gateway's one-way latencies to the key's replicas, less ε.
	M2
)

func (m Mode) String() string {
	switch m {
	case M1:
		return "M1"
	case M2:
		return "M2"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// MarshalText writes the mode's name (configuration files).
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText parses a mode as ParseMode does ("" is the default).
func (m *Mode) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*m = 0
		return nil
	}
	v, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// ParseMode parses "M1" or "M2" (case-insensitive).
func ParseMode(s string) (Mode, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "M1", "1":
		return M1, nil
	case "M2", "2":
		return M2, nil
	}
	return 0, fmt.Errorf("meteor: unknown mode %q (valid: M1, M2)", s)
}

// Config is a meteor keyspace's settings (`protocol: meteor`): the YAML
// names are the setting names, decoded strictly.
type Config struct {
	// ReplicasPerRegion is the number of replicas of every key in each
	// region of the world, in the world's region order. Default: 1 in every
	// region.
	ReplicasPerRegion ring.PerRegion `yaml:"replicas_per_region"`
	// Write is the write level: ONE, QUORUM or ALL (default QUORUM). Reads
	// need the matching count of fresh statuses, n − w + 1, so r + w > n
	// (§4.2: "the minimum requirement to achieve sequential data consistency
	// is r + w > n").
	Write wire.Level `yaml:"write"`
	// Mode is M1 or M2. Default M2.
	Mode Mode `yaml:"mode"`
	// MaxClockSkew (ε) bounds the difference between any two nodes' clocks
	// (§4.2.2: |t1 − t2| ≤ ε). θt is reduced by ε. Default 2ms, the thesis'
	// evaluation value.
	MaxClockSkew time.Duration `yaml:"max_clock_skew"`
	// DispatchInterval is how often each node sends a status message to
	// every peer, even an empty one. Default 10ms (§4.2.5).
	DispatchInterval time.Duration `yaml:"dispatch_interval"`
	// Redundant is how many earlier payloads each status repeats, so a lost
	// status costs no resynchronisation (§4.2.3, "Redundant"). Default 3.
	Redundant int `yaml:"redundant"`
	// ReadTimeout and WriteTimeout bound how long a gateway waits before
	// answering ErrTimeout. Default 5s and 2s.
	ReadTimeout  time.Duration `yaml:"read_timeout"`
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// Theta, if set, overrides the θt computed from the gateway's latencies
	// (env.Env.Latency; M2 only).
	Theta time.Duration `yaml:"theta"`
	// WriteLead is the margin a gateway adds when it stamps a write ahead of
	// its clock: a write is stamped at now + (the w-th smallest one-way
	// latency to the key's replicas) + ε + WriteLead, so it reaches its w
	// nearest replicas before their closures, up to ClosureLead ahead of
	// their clocks, pass its timestamp (doc.go, "Closure"). A write that
	// arrives later is refused there; a gateway whose write is refused by
	// too many replicas to commit restamps it with twice the lead. Default
	// (unset): ε + DispatchInterval + 3ms, 15ms with the other defaults
	// (DefaultWriteLead says why).
	WriteLead time.Duration `yaml:"write_lead"`
	// LeadAll stamps writes far enough ahead for every replica, rather than
	// for the write level's nearest (the w-th smallest latency): fewer
	// writes are refused and restamped under jitter or when a near replica
	// fails mid-write, but a client's read right after its own write waits
	// longer for closures to pass the write's timestamp. Default false.
	LeadAll bool `yaml:"lead_all"`
	// ClosureLead is how far ahead of its clock each status promises the
	// sender's closure (doc.go, "Closure"): the replica refuses writes
	// stamped up to the promise, so a read whose view time the statuses
	// already received cover is answered at once instead of waiting up to a
	// dispatch interval for the next one. It must be below WriteLead + ε,
	// the margin by which writes reach their w nearest replicas ahead of
	// their stamps, of which it uses up to its value. Default (unset):
	// min(ε + DispatchInterval + 1ms, WriteLead − 2ms), 13ms with the other
	// defaults (DefaultClosureLead says why). 0 is the thesis' status,
	// stamped with its send time (§4.2.3: "A timestamp (MsgTs) is included
	// when the status message is sent out").
	ClosureLead *time.Duration `yaml:"closure_lead"`
	// Horizon is how far back reads may look: a replica keeps, besides the
	// versions stamped within Horizon of its clock, the newest committed
	// one before, and refuses (retryably) a read whose view time is older.
	// It must exceed ReadTimeout and WriteTimeout. Default
	// max(ReadTimeout, WriteTimeout) + 5s.
	Horizon time.Duration `yaml:"horizon"`

	acceptLate bool // teeth tests: apply writes the closure has passed (export_test.go)
	clockOnly  bool // teeth tests: refuse only writes the clock has passed, not the promised closure
}

// DefaultMaxClockSkew is MaxClockSkew's default.
const DefaultMaxClockSkew = 2 * time.Millisecond

// EnsureDefaults fills unset fields for a world with regions regions.
func (c *Config) EnsureDefaults(regions int) {
	c.ReplicasPerRegion = c.ReplicasPerRegion.Expand(regions, 1)
	if c.Write == wire.LevelDefault {
		c.Write = wire.Quorum
	}
	if c.Mode == 0 {
		c.Mode = M2
	}
	if c.MaxClockSkew == 0 {
		c.MaxClockSkew = DefaultMaxClockSkew
	}
	if c.DispatchInterval == 0 {
		c.DispatchInterval = 10 * time.Millisecond
	}
	if c.Redundant == 0 {
		c.Redundant = 3
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = 5 * time.Second
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = 2 * time.Second
	}
	if c.WriteLead == 0 {
		c.WriteLead = DefaultWriteLead(c.MaxClockSkew, c.DispatchInterval)
	}
	if c.Horizon == 0 {
		c.Horizon = max(c.ReadTimeout, c.WriteTimeout) + 5*time.Second
	}
	if c.ClosureLead == nil {
		d := DefaultClosureLead(c.MaxClockSkew, c.DispatchInterval, c.WriteLead)
		c.ClosureLead = &d
	}
}

// DefaultClosureLead is ClosureLead's default: ε + interval + 1ms, 13ms
// with the other defaults, and at most writeLead − 2ms (never below 0).
//
// An M2 read's view time T is the serving replica's clock less θt, the
// write level's one-way latency d less ε. A peer's status sent at s
// promises s + ClosureLead and arrives at s + d + jitter; the newest one
// received at the read was sent at most an interval plus the jitter
// before now − d, so it covers T whenever ClosureLead ≥ ε + interval +
// jitter: the extra 1ms covers a typical WAN link's (meteor3: exponential,
// mean 1ms). At 3/5 of an interval above ε (the earlier default, 8ms) a
// read waited for the next status whenever the interval's phase plus the
// jitter exceeded 6ms: p90 4 ms above the floor (meteor3, workload b,
// reads not bound by their client's own write).
//
// The cap keeps ε + 2ms of the write margin (ε + WriteLead) for jitter and
// skew, as the earlier default did with WriteLead 10ms: a write copy is
// refused only if it arrives that much later than its nearest replicas'
// latency predicts (meteor3, workload a, seed 1: 49 writes restamped in
// about 25,000, against 60 with the earlier defaults).
func DefaultClosureLead(eps, interval, writeLead time.Duration) time.Duration {
	return max(0, min(eps+interval+time.Millisecond, writeLead-2*time.Millisecond))
}

// DefaultWriteLead is WriteLead's default: ε + interval + 3ms, 15ms with
// the other defaults, the smallest with which DefaultClosureLead reaches
// ε + interval + 1ms. A write's stamp is a number, not a wait: a larger
// lead costs writes no latency, but a write becomes visible to other
// clients' reads that much later, and its client's own next read views at
// its stamp (doc.go, "Program order") and waits for closures that far
// ahead: ε + WriteLead − ClosureLead (4ms) plus up to an interval (the
// phase of the nearest peer's next status).
func DefaultWriteLead(eps, interval time.Duration) time.Duration {
	return eps + interval + 3*time.Millisecond
}

// closureLead is ClosureLead, 0 before EnsureDefaults.
func (c *Config) closureLead() time.Duration {
	if c.ClosureLead == nil {
		return 0
	}
	return *c.ClosureLead
}

// Validate checks c against a world with the given number of nodes in each
// region.
func (c *Config) Validate(nodesPerRegion []int) error {
	if err := ring.ValidatePlacement("meteor", c.ReplicasPerRegion, nodesPerRegion); err != nil {
		return err
	}
	switch c.Write {
	case wire.One, wire.Quorum, wire.All:
	default:
		return fmt.Errorf("meteor: write level %s; must be ONE, QUORUM or ALL", c.Write)
	}
	if c.Mode != M1 && c.Mode != M2 {
		return fmt.Errorf("meteor: unknown mode %s", c.Mode)
	}
	if c.Redundant < 0 || c.Redundant > 64 {
		return fmt.Errorf("meteor: redundant = %d; must be between 0 and 64", c.Redundant)
	}
	if c.DispatchInterval <= 0 {
		return fmt.Errorf("meteor: dispatch_interval = %s; must be positive", c.DispatchInterval)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"read_timeout", c.ReadTimeout}, {"write_timeout", c.WriteTimeout}, {"max_clock_skew", c.MaxClockSkew}, {"theta", c.Theta}, {"write_lead", c.WriteLead}} {
		if d.v < 0 {
			return fmt.Errorf("meteor: %s = %s; must not be negative", d.name, d.v)
		}
	}
	if cl := c.closureLead(); cl < 0 || cl >= c.WriteLead+c.MaxClockSkew {
		return fmt.Errorf("meteor: closure_lead = %s; must be at least 0 and below write_lead + max_clock_skew (%s): a closure promised that far ahead would refuse writes reaching their nearest replicas on time", cl, c.WriteLead+c.MaxClockSkew)
	}
	if c.Horizon <= max(c.ReadTimeout, c.WriteTimeout) {
		return fmt.Errorf("meteor: horizon = %s; must exceed read_timeout (%s) and write_timeout (%s): reads and write retries must not outlive the versions they concern", c.Horizon, c.ReadTimeout, c.WriteTimeout)
	}
	return nil
}

// writeAcks is w, the acknowledgements a write needs, of n replicas.
func (c *Config) writeAcks(n int) int {
	switch c.Write {
	case wire.One:
		return 1
	case wire.All:
		return n
	}
	return n/2 + 1
}

// Model is the consistency model the scenario runner checks meteor histories
// against (doc.go, "Guarantee"): sequential consistency across keys.
const Model = "sequential"
