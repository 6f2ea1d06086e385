package dirsc

import (
	"fmt"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Config is an SC keyspace's settings (`protocol: sc`): the YAML names are
// the setting names, decoded strictly.
type Config struct {
	// Placement: directory_region, directory_regions, directory_replicas,
	// directory_tick, directory_election_ticks, directory_snapshot_entries
	// and directory_shards
	// (internal/protocol/dirgroup).
	dirgroup.Placement `yaml:",inline"`
	// Frontends: frontend_tick, frontend_election_ticks and
	// frontend_snapshot_entries, the region frontend groups'
	// (internal/protocol/dirgroup).
	dirgroup.Frontends `yaml:",inline"`
	// ShareLease (L) is how long a Shared grant lets a frontend serve
	// reads locally, on its own clock from when it sent its request; the
	// directory waits at most L·(1+ρ)/(1−ρ) on its clock for a sharer that
	// does not acknowledge an invalidation. Default 2s.
	ShareLease time.Duration `yaml:"share_lease"`
	// MaxDriftPPM (ρ) bounds every clock's rate error, in parts per
	// million (doc.go, "Clock assumption"). Default 100.
	MaxDriftPPM float64 `yaml:"max_drift_ppm"`
	// RetryBase and RetryMax bound the exponential backoff (with jitter) a
	// frontend waits before asking the directory again after a "busy"
	// answer: attempt n waits a uniform draw in [½, 1] of
	// min(RetryMax, RetryBase·2ⁿ). Default 10ms and 500ms.
	RetryBase time.Duration `yaml:"retry_base"`
	RetryMax  time.Duration `yaml:"retry_max"`
	// ResendInterval is how long a frontend waits for an answer from the
	// directory or a sync source, and the directory for an invalidation's
	// acknowledgement, before sending again (messages may be lost).
	// Default 300ms.
	ResendInterval time.Duration `yaml:"resend_interval"`
	// OpTimeout bounds how long a client operation waits in its row's
	// queue before it is refused as unavailable (never applied). Default 3s.
	OpTimeout time.Duration `yaml:"op_timeout"`

	// noInvalidationWait grants Modified without waiting for invalidation
	// acknowledgements (teeth tests only).
	noInvalidationWait bool
	// probe, if set, is told of every grant a directory replica sends
	// (failover tests only).
	probe func(e env.Env, g *Grant)
	// serveProbe, if set, is told of every client operation a frontend
	// member answers successfully (frontend failover tests only).
	serveProbe func(e env.Env)
}

// EnsureDefaults fills unset fields.
func (c *Config) EnsureDefaults(w *topo.World) {
	c.Placement.EnsureDefaults(w)
	c.Frontends.EnsureDefaults()
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.ShareLease, 2*time.Second)
	def(&c.RetryBase, 10*time.Millisecond)
	def(&c.RetryMax, 500*time.Millisecond)
	def(&c.ResendInterval, 300*time.Millisecond)
	def(&c.OpTimeout, 3*time.Second)
	if c.MaxDriftPPM == 0 {
		c.MaxDriftPPM = 100
	}
}

// Validate checks c against world w.
func (c *Config) Validate(w *topo.World) error {
	if err := c.Placement.Validate(w); err != nil {
		return fmt.Errorf("sc: %w", err)
	}
	if err := c.Frontends.Validate(); err != nil {
		return fmt.Errorf("sc: %w", err)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"share_lease", c.ShareLease}, {"retry_base", c.RetryBase}, {"retry_max", c.RetryMax},
		{"resend_interval", c.ResendInterval}, {"op_timeout", c.OpTimeout}} {
		if d.v <= 0 {
			return fmt.Errorf("sc: %s = %s; must be positive", d.name, d.v)
		}
	}
	if c.RetryMax < c.RetryBase {
		return fmt.Errorf("sc: retry_max %s < retry_base %s", c.RetryMax, c.RetryBase)
	}
	if c.MaxDriftPPM < 0 || c.MaxDriftPPM >= 1e6 {
		return fmt.Errorf("sc: max_drift_ppm = %g; must be in [0, 1000000)", c.MaxDriftPPM)
	}
	return nil
}

// stretchedLease is how long the directory waits, on its clock, from its
// grant (or from the acknowledgement of a downgrade) before it may treat a
// silent sharer's lease as over: L·(1+ρ)/(1−ρ) (doc.go, rule D4).
func (c *Config) stretchedLease() time.Duration {
	rho := c.MaxDriftPPM / 1e6
	return time.Duration(float64(c.ShareLease)*(1+rho)/(1-rho)) + 1
}

// Keyspace is what every replica of an SC keyspace shares and never
// modifies: the policy and the placement of roles.
type Keyspace struct {
	cfg Config
	dirgroup.Roles
}

// NewKeyspace validates cfg for topology t.
func NewKeyspace(t *topo.Topology, cfg Config) (*Keyspace, error) {
	cfg.EnsureDefaults(t.World)
	if err := cfg.Validate(t.World); err != nil {
		return nil, err
	}
	roles, err := dirgroup.PlaceRoles(t, &cfg.Frontends, &cfg.Placement, "sc")
	if err != nil {
		return nil, err
	}
	return &Keyspace{cfg: cfg, Roles: roles}, nil
}

// Config returns the keyspace's policy with defaults filled.
func (k *Keyspace) Config() Config { return k.cfg }

// loader is the frontend that holds preloaded rows in Modified (the
// thesis's method, §5: one Frontend loads all rows): region 0's.
func (k *Keyspace) loader() wire.NodeID { return k.FrontendIDs[0] }

// Replicas appends the nodes a preloaded key is stored on: every member
// of the loader's region and every replica of the key's directory group
// (all read the same load record, so every replica starts a row from the
// same state).
func (k *Keyspace) Replicas(dst []wire.NodeID, key string) []wire.NodeID {
	members := k.RegionNodes(k.loader())
	dst = append(dst, members...)
	for _, d := range k.Layout.For(key).Members {
		if !slices.Contains(members, d) {
			dst = append(dst, d)
		}
	}
	return dst
}
