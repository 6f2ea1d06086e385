package dirrc

import (
	"fmt"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Config is an RC keyspace's settings (`protocol: rc`): the YAML names are
// the setting names, decoded strictly.
type Config struct {
	// Placement: directory_region, directory_regions, directory_replicas,
	// directory_tick, directory_election_ticks, directory_snapshot_entries
	// and directory_shards (internal/protocol/dirgroup).
	// rc's directory_replicas defaults to 1 (doc.go, "Crashes": under
	// storage faults a group of 3 changes leader too often).
	dirgroup.Placement `yaml:",inline"`
	// Frontends: frontend_tick and frontend_election_ticks, the region
	// frontend groups' (internal/protocol/dirgroup; doc.go, rules F1–F6).
	dirgroup.Frontends `yaml:",inline"`
	// HoldLease (T) is how long the directory keeps a frontend at the head
	// of a row's queue after it last heard from it (a grant or a
	// heartbeat), on the directory's clock; then it forces the release
	// (doc.go, rule 7). A frontend serves a held row only within
	// T·(1−ρ)/(1+ρ) of its own clock after sending the message the
	// directory last answered. Default 1s.
	HoldLease time.Duration `yaml:"hold_lease"`
	// HeartbeatInterval is how often a frontend renews its holds with the
	// directory, and how often the directory looks for expired heads.
	// Must be below hold_lease / 2. Default 100ms.
	HeartbeatInterval time.Duration `yaml:"heartbeat_interval"`
	// HoldTimeout is how long a client may hold a row at its frontend
	// without sending a request (its heartbeat: any request counts) before
	// the frontend releases it for the client (a crashed client cannot
	// wedge a row; doc.go, rule 8). Default 3s.
	HoldTimeout time.Duration `yaml:"hold_timeout"`
	// AcquireTimeout bounds how long a client's acquire waits in its
	// frontend before it is refused as unavailable (never granted).
	// Default 3s.
	AcquireTimeout time.Duration `yaml:"acquire_timeout"`
	// ResendInterval is how long a frontend waits for the directory's grant
	// or a sync source's answer before asking again. Default 200ms.
	ResendInterval time.Duration `yaml:"resend_interval"`
	// MaxDriftPPM (ρ) bounds every clock's rate error, in parts per million
	// (doc.go, "Clock assumption"). Default 100.
	MaxDriftPPM float64 `yaml:"max_drift_ppm"`

	// noSync grants without syncing from the last holder (teeth tests only).
	noSync bool
	// probe, if set, is told of every grant a directory replica sends,
	// forced release, client eviction and client operation a frontend
	// member answers successfully ("serve") (tests only).
	probe func(e env.Env, event string)
}

// EnsureDefaults fills unset fields.
func (c *Config) EnsureDefaults(w *topo.World) {
	// directory_replicas defaults to 3 as in sc (dirgroup.Placement): no
	// single point of failure. Under heavy storage faults a group of 3
	// changes leader often (doc.go, "Crashes").
	c.Placement.EnsureDefaults(w)
	c.Frontends.EnsureDefaults()
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.HoldLease, time.Second)
	def(&c.HeartbeatInterval, 100*time.Millisecond)
	def(&c.HoldTimeout, 3*time.Second)
	def(&c.AcquireTimeout, 3*time.Second)
	def(&c.ResendInterval, 200*time.Millisecond)
	if c.MaxDriftPPM == 0 {
		c.MaxDriftPPM = 100
	}
}

// Validate checks c against world w.
func (c *Config) Validate(w *topo.World) error {
	if err := c.Placement.Validate(w); err != nil {
		return fmt.Errorf("rc: %w", err)
	}
	if err := c.Frontends.Validate(); err != nil {
		return fmt.Errorf("rc: %w", err)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"hold_lease", c.HoldLease}, {"heartbeat_interval", c.HeartbeatInterval}, {"hold_timeout", c.HoldTimeout},
		{"acquire_timeout", c.AcquireTimeout}, {"resend_interval", c.ResendInterval}} {
		if d.v <= 0 {
			return fmt.Errorf("rc: %s = %s; must be positive", d.name, d.v)
		}
	}
	if 2*c.HeartbeatInterval >= c.HoldLease {
		return fmt.Errorf("rc: heartbeat_interval %s must be below hold_lease/2 (%s)", c.HeartbeatInterval, c.HoldLease/2)
	}
	if c.MaxDriftPPM < 0 || c.MaxDriftPPM >= 1e5 {
		return fmt.Errorf("rc: max_drift_ppm = %g; must be in [0, 100000)", c.MaxDriftPPM)
	}
	return nil
}

// Keyspace is a built RC keyspace: its settings and who plays which role.
type Keyspace struct {
	cfg Config
	dirgroup.Roles
}

// NewKeyspace validates cfg against t and places the roles.
func NewKeyspace(t *topo.Topology, cfg Config) (*Keyspace, error) {
	cfg.EnsureDefaults(t.World)
	if err := cfg.Validate(t.World); err != nil {
		return nil, err
	}
	roles, err := dirgroup.PlaceRoles(t, &cfg.Frontends, &cfg.Placement, "rc")
	if err != nil {
		return nil, err
	}
	return &Keyspace{cfg: cfg, Roles: roles}, nil
}

// Config returns the keyspace's settings with defaults filled.
func (k *Keyspace) Config() Config { return k.cfg }

// resumeGrace is how much longer than hold_lease a new leader waits before
// it may force a head's release: a deposed leader may still answer
// heartbeats until it steps down (dirgroup.Placement.MaxStepDown; doc.go,
// rule R4).
func (k *Keyspace) resumeGrace() time.Duration {
	return k.cfg.Placement.MaxStepDown(k.cfg.MaxDriftPPM * 1e-6)
}

// Replicas appends every node: every member of every region's frontend
// group starts each row from the preloaded record.
func (k *Keyspace) Replicas(dst []wire.NodeID, key string) []wire.NodeID {
	for _, ids := range k.Topo.ByRegion {
		dst = append(dst, ids...)
	}
	return dst
}

// gatewayTimeout bounds how long a gateway waits for its region's
// frontend leader to answer: an acquire may wait acquire_timeout there,
// plus resends.
func (k *Keyspace) gatewayTimeout() time.Duration {
	return k.cfg.AcquireTimeout + 2*k.cfg.ResendInterval
}

// feLease is how long, on a frontend's clock, a hold stays servable after
// the frontend sent the message the directory answered: T·(1−ρ)/(1+ρ), so
// it ends in real time before the directory's T on its clock can (doc.go,
// "Clock assumption").
func (k *Keyspace) feLease() time.Duration {
	rho := k.cfg.MaxDriftPPM * 1e-6
	return time.Duration(float64(k.cfg.HoldLease) * (1 - rho) / (1 + rho))
}
