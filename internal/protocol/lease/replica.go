package lease

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/ring"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Config is a lease keyspace's policy.
type Config struct {
	// LeaseLength is how long a non-master may serve reads after a grant,
	// on its own clock. Default 60s (GlobLease Table II).
	LeaseLength time.Duration `yaml:"lease_length"`
	// MaxDriftPPM (ρ) bounds every clock's rate error, in parts per
	// million. Default 200.
	MaxDriftPPM float64 `yaml:"max_drift_ppm"`
	// RenewTimeout (B): a grant arriving later than this after its request
	// is ignored, and the request is sent again. Default 2s.
	RenewTimeout time.Duration `yaml:"renew_timeout"`
	// ReadTimeout and WriteTimeout bound a gateway's wait. Default 5s each.
	ReadTimeout  time.Duration `yaml:"read_timeout"`
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// Passive makes writes use passive update when no lease is valid
	// (Alg. 2); otherwise every write updates a majority and every holder
	// (active update). Default false. A passive write lives only on its
	// master until the lazy updates land: if the master fails for good
	// first, it is lost (the paper's "weaker data availability").
	Passive bool `yaml:"passive"`
	// MasterLease (T_m) is how long a majority's confirmation lets a master
	// serve reads and grant leases without asking again; a replica that
	// confirmed votes for no other master for T_m·(1+ρ)/(1−ρ). It bounds
	// how long a failed master's keys stay unavailable. Default 30s.
	MasterLease time.Duration `yaml:"master_lease"`
	// ElectionTimeout: a replica that has waited this long for its master
	// starts an election. Default 3s.
	ElectionTimeout time.Duration `yaml:"election_timeout"`
	// AutoMigrate moves a key's mastership to the region that issues most
	// of its writes: at the end of every MigrateWindow (default 30s), a key
	// whose writes came at least MigrateMinWrites times (default 10) and at
	// least MigrateThreshold of the time (default 0.8) from one other
	// region migrates there.
	AutoMigrate      bool          `yaml:"auto_migrate"`
	MigrateWindow    time.Duration `yaml:"migrate_window"`
	MigrateThreshold float64       `yaml:"migrate_threshold"`
	MigrateMinWrites int           `yaml:"migrate_min_writes"`
	// Affiliates is how many other nodes of its region a hot key's replica
	// attaches as affiliated nodes (§III.F; 0: none). Hot keys are the top
	// HotKeys (default 10) a replica serves at HotRate reads/s or more
	// (default 20) over each HotWindow (default 2s).
	Affiliates int           `yaml:"affiliates"`
	HotKeys    int           `yaml:"hot_keys"`
	HotRate    float64       `yaml:"hot_rate"`
	HotWindow  time.Duration `yaml:"hot_window"`

	// noElectionFence disables the fence after an election (tests only:
	// it shows the fence is what keeps the old master's leases safe).
	noElectionFence bool
	// noAffiliateWait makes a host acknowledge updates without waiting for
	// its affiliates (tests only).
	noAffiliateWait bool
	// ignoreStoreErrors makes a replica read a failed store read as absent
	// and carry on after a failed write, instead of fail-stopping (tests
	// only: it shows fail-stop is what keeps a failing store safe).
	ignoreStoreErrors bool
	// ignoreCond makes the master apply every conditional write as if its
	// condition held (tests only: it shows the check at the master is
	// what makes read-modify-write atomic).
	ignoreCond bool
	// eagerConflicts makes the master answer a conflict at once, even
	// against a record not known to be on a majority (tests only: it
	// shows why conflicts wait).
	eagerConflicts bool
	// publishForever publishes local reads with no end (tests only: it
	// shows that a lease's end is what bounds a published read).
	publishForever bool
	// keepPublishedOnFreeze leaves a frozen key's published reads (tests
	// only: it shows the freeze's withdrawal is what refuses them).
	keepPublishedOnFreeze bool
}

// EnsureDefaults fills unset fields.
func (c *Config) EnsureDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.LeaseLength, 60*time.Second)
	def(&c.RenewTimeout, 2*time.Second)
	def(&c.ReadTimeout, 5*time.Second)
	def(&c.WriteTimeout, 5*time.Second)
	def(&c.MasterLease, 30*time.Second)
	def(&c.ElectionTimeout, 3*time.Second)
	def(&c.MigrateWindow, 30*time.Second)
	def(&c.HotWindow, 2*time.Second)
	if c.HotKeys == 0 {
		c.HotKeys = 10
	}
	if c.HotRate == 0 {
		c.HotRate = 20
	}
	if c.MaxDriftPPM == 0 {
		c.MaxDriftPPM = 200
	}
	if c.MigrateThreshold == 0 {
		c.MigrateThreshold = 0.8
	}
	if c.MigrateMinWrites == 0 {
		c.MigrateMinWrites = 10
	}
}

// Validate checks the policy; each error names the setting.
func (c Config) Validate() error {
	pos := []struct {
		name string
		d    time.Duration
	}{
		{"lease_length", c.LeaseLength}, {"renew_timeout", c.RenewTimeout}, {"read_timeout", c.ReadTimeout},
		{"write_timeout", c.WriteTimeout}, {"master_lease", c.MasterLease}, {"election_timeout", c.ElectionTimeout},
		{"migrate_window", c.MigrateWindow}, {"hot_window", c.HotWindow},
	}
	for _, p := range pos {
		if p.d <= 0 {
			return fmt.Errorf("lease: %s %s: must be positive", p.name, p.d)
		}
	}
	switch {
	case c.MaxDriftPPM < 0 || c.MaxDriftPPM >= 100_000:
		return fmt.Errorf("lease: max_drift_ppm %g: must be in [0, 100000)", c.MaxDriftPPM)
	case c.MigrateThreshold <= 0.5 || c.MigrateThreshold > 1:
		return fmt.Errorf("lease: migrate_threshold %g: must be in (0.5, 1]", c.MigrateThreshold)
	case c.MigrateMinWrites < 1:
		return fmt.Errorf("lease: migrate_min_writes %d: must be at least 1", c.MigrateMinWrites)
	case c.Affiliates < 0:
		return fmt.Errorf("lease: affiliates %d: must not be negative", c.Affiliates)
	case c.HotKeys < 1:
		return fmt.Errorf("lease: hot_keys %d: must be at least 1", c.HotKeys)
	case c.HotRate <= 0:
		return fmt.Errorf("lease: hot_rate %g: must be positive", c.HotRate)
	}
	return nil
}

// Keyspace is the shared, read-only state of a lease keyspace.
type Keyspace struct {
	cfg  Config
	topo *topo.Topology
	ring *ring.Ring
	// recordFactor stretches a duration measured on one clock into a bound
	// on another's, for the worst drifts: (1+ρ)/(1−ρ) (doc.go).
	recordFactor float64
	// group is the size of every key's replication group (Replicas): one
	// replica in each region.
	group int
}

// NewKeyspace validates cfg for topology t.
func NewKeyspace(t *topo.Topology, cfg Config) (*Keyspace, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Affiliates > t.World.NodesPerRegion-1 {
		return nil, fmt.Errorf("lease: affiliates %d: a region of world %q has only %d other nodes", cfg.Affiliates, t.World.Name, t.World.NodesPerRegion-1)
	}
	rho := cfg.MaxDriftPPM / 1e6
	k := &Keyspace{cfg: cfg, topo: t, ring: ring.New(t), recordFactor: (1 + rho) / (1 - rho)}
	k.group = len(k.Replicas(nil, "")) // any key's: each region's ring gives one
	return k, nil
}

// Config returns the policy with defaults filled.
func (k *Keyspace) Config() Config { return k.cfg }

// Replicas appends key's replication group: its replica in every region's
// ring (GlobLease §III.A), in region order.
func (k *Keyspace) Replicas(dst []wire.NodeID, key string) []wire.NodeID {
	for r := range k.topo.World.Regions {
		dst = k.ring.Replicas(dst, r, key, 1)
	}
	return dst
}

// Master is key's initial master (ballot 0): its replica in the region the
// key hashes to. Migrations and elections move it.
func (k *Keyspace) Master(key string) wire.NodeID {
	r := int(ring.Hash("master/"+key) % uint64(len(k.topo.World.Regions)))
	return k.ring.Owner(r, key)
}

// LoadVersion is the version of records loaded into the store before a run
// (ballot 0, before every write).
func LoadVersion() wire.Version { return wire.Version{} }

// Factory returns the constructor of this keyspace's replicas.
func (k *Keyspace) Factory() env.Factory {
	return func(id wire.NodeID) env.Replica {
		return &Replica{ks: k, id: id, region: k.topo.RegionOf(id)}
	}
}

// stretch converts a duration on one clock into a bound on any other.
func (k *Keyspace) stretch(d time.Duration) int64 { return int64(float64(d) * k.recordFactor) }

// majority is the size of a majority of a key's replication group.
func (k *Keyspace) majority() int { return k.group/2 + 1 }

// stamp is the version of the seq-th write of a mastership: ballot-major,
// so every write of a later master orders after every write of an earlier
// one, whatever the clocks say (doc.go, "Versions").
func stamp(b Ballot, seq uint64) wire.Version {
	return wire.Version{TS: hlc.Timestamp{WallNanos: int64(b.N<<40 | seq>>32), Logical: uint32(seq)}, Node: b.Node}
}

func ballotOf(v wire.Version) uint64 { return uint64(v.TS.WallNanos) >> 40 }
func seqOf(v wire.Version) uint64 {
	return uint64(v.TS.WallNanos)&(1<<40-1)<<32 | uint64(v.TS.Logical)
}

// meta is a replica's durable view of a key's mastership: it accepted
// mastership `accepted` (whose node is the master it follows) and promised
// to refuse every ballot below `promised` (Paxos phases 1 and 2).
type meta struct {
	promised, accepted Ballot
}

// metaPrefix keeps mastership records apart from data; user keys may not
// start with it (Request refuses them).
const metaPrefix = "\x00lease/"

// activeKey marks a node that has granted a lease or confirmed a master
// (markActive); it cannot collide with a mastership record (those add a
// user key, which cannot start with metaPrefix).
const activeKey = metaPrefix + metaPrefix + "active"

var storeMarker = store.Record{Value: []byte{1}}

// Stats are a replica's counters (issue 5, item 7): lease renewals it
// asked for, grants it gave, lease holders its writes had to update
// (invalidations), keys it confirmed as master, elections, migrations and
// rollbacks it won, hot keys it attached and detached; and gauges: leases
// it holds now, and keys it masters among those it has touched since it
// started (a key's initial master is computed, not stored, until used).
// Summed over a region's nodes they give the region's masters.
type Stats struct {
	Renewals, Grants, Invalidations, Confirms uint64
	Elections, Migrations, Rollbacks          uint64
	Attached, Detached                        uint64
	LeasesHeld, MastersHeld                   int
}

// Replica is one node of a lease keyspace: gateway for its region's
// clients, replica of the keys it owns, master of some of them.
type Replica struct {
	ks     *Keyspace
	id     wire.NodeID
	region int
	nextOp uint64

	// Gateway: requests waiting for their replica or master, and the
	// newest mastership heard of per key (the echo-learned route).
	ops   map[uint64]*gop
	hints map[string]Ballot

	// Replica: mastership records (cache of the durable ones), leases held,
	// outstanding renewals, and the promise not to vote against a master
	// that confirmed recently (voteBlock; voteFence after a restart).
	metas     map[string]*meta
	leases    map[string]slaveLease
	renewing  map[string]*renewal
	voteBlock map[string]int64
	voteFence int64

	// Master: its lease to serve (mlease), confirmations in flight, lease
	// records and unacknowledged grants, writes in progress, the fence
	// after a restart and per key after an election, keys being handed
	// over, and write origins for automatic migration.
	mlease    map[string]int64
	confirms  map[string]*confirmRound
	records   map[string]map[wire.NodeID]int64
	pending   map[string]map[wire.NodeID]grant
	writes    map[uint64]*write
	inflight  map[string]int
	fence     int64
	keyFence  map[string]keyFence
	migrating map[string]*migration
	draining  map[string][]waitMigrate
	origins   map[string][]int
	// Conditional writes (doc.go, "Conditional writes"): the newest version
	// of each key this master knows to be on a majority, and the
	// conditional writes that failed their check against a record not
	// known to be, waiting for the key's writes in progress to end.
	committed map[string]wire.Version
	condWaits map[string][]condWait

	// Candidate: elections in progress.
	campaigns map[string]*campaign

	// Requests (requests.go): this node's incarnation; writes and
	// migrations it has handled recently, so a copy the network duplicated
	// is not executed twice; and, as a gateway, the newest incarnation it
	// knows of each node.
	inc         uint64
	seen        map[opID]int64
	seenPurgeAt int
	incs        map[wire.NodeID]uint64

	// Keep-alive (keepalive.go): when each key this node masters was last
	// used, and batched confirmations in flight; whether this node has ever
	// granted or confirmed (markActive).
	masterUse map[string]int64
	batches   map[uint64]*batchRound
	active    bool

	// Affiliated nodes (affiliates.go): keys this node hosts affiliates
	// for, its secondary leases as an affiliate, updates waiting for
	// affiliates, read counts for hot-key detection, the gateway's view of
	// hot keys' affiliates, and the fence after a restart.
	hosted    map[string]*hosted
	secLeases map[string]secLease
	hostWaits map[uint64]*hostWait
	hot       map[string]int
	affCache  map[string][]wire.NodeID
	affSeen   map[string]wire.Version
	rr        uint64
	affFence  int64

	stats Stats
}

type gop struct {
	req       *wire.Request
	timeout   env.TimerID
	timer     leaseTimer  // timeout's payload (gatewayTimer)
	msg       request     // what is sent to the master (writes, migrations)
	target    wire.NodeID // where the current attempt went
	inc       uint64      // the incarnation of target it was addressed to
	redirects int
}

// gatewayTimer is the payload of g's timeout, operation op: a pointer
// into g, so that arming it allocates nothing (every read arms one).
func (g *gop) gatewayTimer(op uint64) *leaseTimer {
	g.timer = leaseTimer{kind: timerGateway, op: op}
	return &g.timer
}

type opID struct {
	from wire.NodeID
	op   uint64
}

type waitRead struct {
	from wire.NodeID
	op   uint64
}

type waitRenew struct {
	from  wire.NodeID
	nonce uint64
}

type slaveLease struct {
	exp    int64
	ballot Ballot
	reads  int // served under this lease
}

// renewAheadReads: a lease that has served this many reads is renewed
// ahead of its expiry (in its last eighth).
const renewAheadReads = 4

type renewal struct {
	nonce   uint64
	sent    int64
	first   int64
	waiting []waitRead
}

type grant struct {
	nonce  uint64
	expiry int64
}

type keyFence struct {
	until  int64
	except wire.NodeID
}

// condWait is a conditional write waiting at the master (onMWrite).
// recommitted: it has already waited for a re-replication of the key's
// record, so if that failed it is refused rather than waiting again.
type condWait struct {
	from        wire.NodeID
	m           *MWrite
	recommitted bool
}

type write struct {
	id      uint64
	from    wire.NodeID
	op      uint64
	key     string
	ballot  Ballot
	version wire.Version
	acked   map[wire.NodeID]bool
	timeout env.TimerID
	recheck env.TimerID
	// recommit: a re-replication of the key's current record, which no
	// client asked for (nothing to answer).
	recommit bool
}

type confirmRound struct {
	nonce  uint64
	sent   int64
	acks   map[wire.NodeID]bool
	reads  []waitRead
	renews []waitRenew
	moves  []waitMigrate
}

type waitMigrate struct {
	from wire.NodeID
	m    *Migrate
}

type migration struct {
	target wire.NodeID
	from   wire.NodeID // requester's gateway (0 with auto)
	op     uint64
	auto   bool
}

type campaign struct {
	ballot Ballot
	old    Ballot // the mastership being replaced
	// newest is the latest mastership any promise (or this node) reported:
	// the election fence need not cover that master's node — not the
	// possibly stale old one's.
	newest  Ballot
	consent bool // a handoff: the old master agreed
	// inherit: the handoff's lease records are complete — every promise
	// reported the old master's mastership as current, so no master came
	// between (otherwise the election fence applies).
	inherit  bool
	holders  []HolderLease
	notify   wire.NodeID // old master to tell how the handoff ended
	phase    int
	promises map[wire.NodeID]bool
	rejects  int
	found    bool
	best     store.Record
	accepted map[wire.NodeID]bool
	sent     int64
}

type timerKind uint8

const (
	timerGateway timerKind = iota + 1
	timerRenew
	timerRecheck
	timerWriteTimeout
	timerConfirm
	timerCampaign
	timerMigrate
	timerAutoMigrate
	timerHot
	timerHostWait
	timerKeepAlive
	timerBatch
	timerSweep
)

type leaseTimer struct {
	kind  timerKind
	op    uint64
	key   string
	nonce uint64
}

// Start implements env.Replica. Leases, records and pending operations are
// volatile; mastership records are durable. A restarted master cannot know
// which leases it granted, so until every lease it could have granted has
// expired it counts every replica as a holder (the fence); a restarted
// replica cannot know whom it confirmed, so it votes for nobody for as
// long as a confirmation binds (voteFence).
func (r *Replica) Start(e env.Env) {
	r.ops = map[uint64]*gop{}
	r.hints = map[string]Ballot{}
	r.metas = map[string]*meta{}
	r.leases = map[string]slaveLease{}
	r.renewing = map[string]*renewal{}
	r.voteBlock = map[string]int64{}
	r.mlease = map[string]int64{}
	r.confirms = map[string]*confirmRound{}
	r.records = map[string]map[wire.NodeID]int64{}
	r.pending = map[string]map[wire.NodeID]grant{}
	r.writes = map[uint64]*write{}
	r.inflight = map[string]int{}
	r.keyFence = map[string]keyFence{}
	r.migrating = map[string]*migration{}
	r.draining = map[string][]waitMigrate{}
	r.origins = map[string][]int{}
	r.committed = map[string]wire.Version{}
	r.condWaits = map[string][]condWait{}
	r.campaigns = map[string]*campaign{}
	r.seen = map[opID]int64{}
	r.masterUse = map[string]int64{}
	r.batches = map[uint64]*batchRound{}
	r.hosted = map[string]*hosted{}
	r.secLeases = map[string]secLease{}
	r.hostWaits = map[uint64]*hostWait{}
	r.hot = map[string]int{}
	r.affCache = map[string][]wire.NodeID{}
	r.affSeen = map[string]wire.Version{}
	r.nextOp = e.Rand().Uint64()>>1 | 1
	r.startIncarnation(e)
	now := e.Now()
	// Fences protect leases and confirmations a previous incarnation gave;
	// a node that never gave any (no marker) needs none.
	_, r.active = r.get(e, activeKey)
	if r.active {
		r.fence = now + r.ks.stretch(r.ks.cfg.LeaseLength+r.ks.cfg.RenewTimeout)
		r.voteFence = now + r.ks.stretch(r.ks.cfg.MasterLease)
	}
	e.SetTimer(keepAlivePeriod(r.ks.cfg.MasterLease), &leaseTimer{kind: timerKeepAlive})
	e.SetTimer(r.ks.cfg.LeaseLength, &leaseTimer{kind: timerSweep})
	if r.ks.cfg.AutoMigrate {
		e.SetTimer(r.ks.cfg.MigrateWindow, &leaseTimer{kind: timerAutoMigrate})
	}
	if r.ks.cfg.Affiliates > 0 {
		if r.active {
			r.affFence = now + r.ks.stretch(r.ks.cfg.LeaseLength+r.ks.cfg.RenewTimeout)
		}
		e.SetTimer(r.ks.cfg.HotWindow, &leaseTimer{kind: timerHot})
	}
}

// Stats returns the replica's counters.
func (r *Replica) Stats(now int64) Stats {
	s := r.stats
	for _, l := range r.leases { // lint:order-independent: a count
		if l.exp > now {
			s.LeasesHeld++
		}
	}
	for _, m := range r.metas { // lint:order-independent: a count
		if m.accepted.Node == r.id && m.accepted == m.promised {
			s.MastersHeld++
		}
	}
	return s
}

// meta returns key's mastership record, read from the store once.
func (r *Replica) meta(e env.Env, key string) *meta {
	if m := r.metas[key]; m != nil {
		return m
	}
	b := Ballot{Node: r.ks.Master(key)}
	m := &meta{promised: b, accepted: b}
	if rec, ok := r.get(e, metaPrefix+key); ok {
		d := wire.NewDecoder(rec.Value)
		p, a := decodeBallot(d), decodeBallot(d)
		if err := d.Err(); err != nil {
			e.FailStop(fmt.Errorf("lease: mastership record of %q: %w", key, err))
		} else {
			m.promised, m.accepted = p, a
		}
	}
	r.metas[key] = m
	return m
}

// setMeta makes a mastership record durable (persist before send: the
// runtime flushes it before this handler's messages leave).
func (r *Replica) setMeta(e env.Env, key string, promised, accepted Ballot) {
	m := r.meta(e, key)
	// Paxos: a replica's promise never goes back, and it accepts nothing
	// below it. Everything in doc.go, "Masters", rests on this.
	env.Invariant(e, !promised.Less(m.promised) && !promised.Less(accepted),
		"lease: mastership of %q from promised %v accepted %v to promised %v accepted %v", key, m.promised, m.accepted, promised, accepted)
	m.promised, m.accepted = promised, accepted
	env.WithdrawRead(e, key) // what reads were answered under has changed
	r.put(e, metaPrefix+key, store.Record{Value: appendBallot(appendBallot(nil, promised), accepted)})
}

func (r *Replica) isMaster(m *meta) bool { return m.accepted.Node == r.id && m.promised == m.accepted }

func (r *Replica) isMember(key string) bool {
	return r.ks.ring.Owner(r.region, key) == r.id
}

// known is the newest mastership of key this node has heard of.
func (r *Replica) known(e env.Env, key string) Ballot {
	b, ok := r.hints[key]
	if r.isMember(key) {
		if a := r.meta(e, key).accepted; !ok || b.Less(a) {
			b = a
		}
		return b
	}
	if !ok {
		return Ballot{Node: r.ks.Master(key)}
	}
	return b
}

func (r *Replica) hint(e env.Env, key string, b Ballot) bool {
	if r.known(e, key).Less(b) {
		r.hints[key] = b
		return true
	}
	return false
}

func (r *Replica) regionNames() string {
	var names []string
	for _, reg := range r.ks.topo.World.Regions {
		names = append(names, reg.Name)
	}
	return strings.Join(names, ", ")
}

func (r *Replica) others(key string) []wire.NodeID {
	return slices.DeleteFunc(r.ks.Replicas(nil, key), func(n wire.NodeID) bool { return n == r.id })
}

// Request implements env.Replica: reads go to the key's replica in this
// region, writes and migrations to its master.
func (r *Replica) Request(e env.Env, req *wire.Request) {
	if len(req.Key) >= len(metaPrefix) && req.Key[:len(metaPrefix)] == metaPrefix {
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrInvalid, Msg: fmt.Sprintf("lease: keys starting with %q are reserved", metaPrefix)}})
		return
	}
	r.nextOp++
	op := r.nextOp
	g := &gop{req: req}
	switch req.Op {
	case wire.OpGet:
		g.timeout = e.SetTimer(r.ks.cfg.ReadTimeout, g.gatewayTimer(op))
		r.ops[op] = g
		r.send(e, r.readTarget(req.Key), &LRead{Op: op, Key: req.Key})
		return
	case wire.OpPut, wire.OpDelete:
		rec := store.Record{Tombstone: req.Op == wire.OpDelete}
		if !rec.Tombstone {
			rec.Value = req.Value
		}
		passive := r.ks.cfg.Passive
		switch req.Update {
		case wire.UpdateActive:
			passive = false
		case wire.UpdatePassive:
			passive = true
		}
		g.msg = &MWrite{Op: op, Key: req.Key, Rec: rec, Passive: passive, Origin: r.region, Cond: req.Cond, Expected: req.Expected}
		g.timeout = e.SetTimer(r.ks.cfg.WriteTimeout, g.gatewayTimer(op))
	case wire.OpMigrate:
		reg := r.ks.topo.World.RegionIndex(string(req.Value))
		if reg < 0 {
			e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrInvalid, Msg: fmt.Sprintf("lease: migrate %q: unknown region %q (valid: %s)", req.Key, req.Value, r.regionNames())}})
			return
		}
		g.msg = &Migrate{Op: op, Key: req.Key, Region: reg}
		g.timeout = e.SetTimer(r.ks.cfg.WriteTimeout+r.ks.cfg.ElectionTimeout, g.gatewayTimer(op))
	default:
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrInvalid, Msg: fmt.Sprintf("lease: unknown operation %s", req.Op)}})
		return
	}
	r.ops[op] = g
	g.target = r.known(e, req.Key).Node
	r.attempt(e, g)
}

// send delivers m, handling it in place when it is for this node.
func (r *Replica) send(e env.Env, to wire.NodeID, m wire.Msg) {
	if to == r.id {
		r.Step(e, r.id, m)
		return
	}
	e.Send(to, m)
}

// Step implements env.Replica.
func (r *Replica) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	switch m := m.(type) {
	case *LRead:
		r.onLRead(e, from, m)
	case *LReadResp:
		r.answerRead(e, from, m)
	case *MWrite:
		r.onMWrite(e, from, m)
	case *MWriteResp:
		r.answerWrite(e, from, m)
	case *Renew:
		r.onRenew(e, from, m)
	case *Grant:
		r.onGrant(e, from, m)
	case *GrantAck:
		r.onGrantAck(e, from, m)
	case *Update:
		r.onUpdate(e, from, m)
	case *UpdateAck:
		r.onUpdateAck(e, from, m)
	case *Confirm:
		r.onConfirm(e, from, m)
	case *ConfirmAck:
		r.onConfirmAck(e, from, m)
	case *Prepare:
		r.onPrepare(e, from, m)
	case *Promise:
		r.onPromise(e, from, m)
	case *Accept:
		r.onAccept(e, from, m)
	case *Accepted:
		r.onAccepted(e, from, m)
	case *Handoff:
		r.onHandoff(e, from, m)
	case *HandoffDone:
		r.onHandoffDone(e, from, m)
	case *Migrate:
		r.onMigrate(e, from, m)
	case *MigrateResp:
		r.answerMigrate(e, from, m)
	case *Hello:
		r.learnInc(from, m.Inc)
	case *SecGrant:
		r.onSecGrant(e, from, m)
	case *ConfirmBatch:
		r.onConfirmBatch(e, from, m)
	case *ConfirmBatchAck:
		r.onConfirmBatchAck(e, from, m)
	case *SecRenew:
		r.onSecRenew(e, from, m)
	case *SecUpdate:
		r.onSecUpdate(e, from, m)
	case *SecUpdateAck:
		r.onSecUpdateAck(e, from, m)
	}
}

// apply installs rec if it is newer than what the store has: a replica's
// versions only grow (doc.go, "Versions").
func (r *Replica) apply(e env.Env, key string, rec store.Record) {
	if cur, ok := r.get(e, key); ok && !cur.Version.Less(rec.Version) {
		return
	}
	r.put(e, key, rec)
}

func (r *Replica) readResp(e env.Env, op uint64, key string) *LReadResp {
	rec, ok := r.get(e, key)
	r.countRead(key)
	return &LReadResp{Op: op, Key: key, Found: ok, Rec: rec, Affiliates: r.advertised(key)}
}

// onLRead is GlobLease Alg. 1: the master, or a replica with a valid lease,
// answers; otherwise the read waits for a lease renewed from the master.
func (r *Replica) onLRead(e env.Env, from wire.NodeID, m *LRead) {
	if !r.isMember(m.Key) {
		r.affiliateRead(e, from, m)
		return
	}
	now := e.Now()
	mt := r.meta(e, m.Key)
	if mt.accepted.Node == r.id && r.campaigns[m.Key] == nil {
		switch {
		case !r.isMaster(mt) || r.migrating[m.Key] != nil:
			r.send(e, from, &LReadResp{Op: m.Op, Key: m.Key, Retry: true})
		case r.mlease[m.Key] > now:
			r.refreshMaster(e, m.Key, now)
			resp := r.readResp(e, m.Op, m.Key)
			// Published until half the master lease is left, where the
			// keep-alive starts renewing it (keepalive.go): the reads
			// after that pass here and keep marking the key used, so a
			// key read only through published replies is renewed too.
			r.publish(e, from, resp, r.mlease[m.Key]-int64(r.ks.cfg.MasterLease)/2)
			r.send(e, from, resp)
		default:
			r.confirm(e, m.Key, &waitRead{from, m.Op}, nil)
		}
		return
	}
	if l := r.leases[m.Key]; l.exp > now && l.ballot == mt.accepted {
		resp := r.readResp(e, m.Op, m.Key)
		// Published until the lease's last eighth, whose reads pass here
		// and renew it ahead (below).
		published := r.publish(e, from, resp, l.exp-int64(r.ks.cfg.LeaseLength)/8)
		r.send(e, from, resp)
		// A lease that is being used is renewed before it runs out, so a
		// busy key's reads never stall for a renewal round trip. A
		// published read counts as that use: the reads it answers later
		// never pass here, so the first read of the last eighth renews.
		l.reads++
		if published {
			l.reads = max(l.reads, renewAheadReads-1)
		}
		r.leases[m.Key] = l
		if l.reads >= renewAheadReads && l.exp-now < int64(r.ks.cfg.LeaseLength)/8 && r.renewing[m.Key] == nil {
			rn := &renewal{first: now}
			r.renewing[m.Key] = rn
			r.requestLease(e, m.Key, rn)
		}
		return
	}
	rn := r.renewing[m.Key]
	if rn == nil {
		rn = &renewal{first: now}
		r.renewing[m.Key] = rn
	}
	rn.waiting = append(rn.waiting, waitRead{from, m.Op})
	if rn.nonce == 0 {
		r.requestLease(e, m.Key, rn)
	}
}

// publish offers a read this node answered for its own gateway to that
// gateway's later reads of the key, until the time until on this node's
// clock (env.PublishRead; doc.go, "Published reads"). Until then any such
// read would be answered here from the store alone, unless the key's
// record changes (the runtime withdraws it on the store's Put) or its
// mastership does (setMeta, stepDown and a migration's freeze withdraw
// it). Not with affiliates: their hot-key detection counts every read. It
// reports whether the runtime took the reply.
func (r *Replica) publish(e env.Env, from wire.NodeID, m *LReadResp, until int64) bool {
	if from != r.id || r.ks.cfg.Affiliates > 0 || until <= e.Now() {
		return false
	}
	g := r.ops[m.Op]
	if g == nil || g.req.Op != wire.OpGet || g.req.Key != m.Key {
		return false
	}
	if r.ks.cfg.publishForever {
		until = 0
	}
	return env.PublishRead(e, m.Key, g.req.Level, readReply(g.req, m), until)
}

func (r *Replica) requestLease(e env.Env, key string, rn *renewal) {
	rn.nonce = e.Rand().Uint64() | 1
	rn.sent = e.Now()
	r.stats.Renewals++
	r.send(e, r.known(e, key).Node, &Renew{Key: key, Nonce: rn.nonce})
	e.SetTimer(r.ks.cfg.RenewTimeout, &leaseTimer{kind: timerRenew, key: key, nonce: rn.nonce})
}

// onGrant starts the lease on arrival (GlobLease §III.D) — if it answers
// the outstanding request and arrived within RenewTimeout of asking, which
// is what bounds the master's pending record (docs/design/lease.md). A
// grant of a later mastership than this replica knows teaches it: the
// master granted under its master lease, so a majority accepted it.
func (r *Replica) onGrant(e env.Env, from wire.NodeID, m *Grant) {
	rn := r.renewing[m.Key]
	now := e.Now()
	if rn == nil || rn.nonce != m.Nonce {
		return
	}
	if m.Redirect {
		if r.hint(e, m.Key, m.Ballot) {
			r.requestLease(e, m.Key, rn) // the echo names a later master: ask it now
		}
		return
	}
	mt := r.meta(e, m.Key)
	if now-rn.sent > int64(r.ks.cfg.RenewTimeout) || m.Ballot.Less(mt.accepted) {
		return
	}
	if mt.accepted.Less(m.Ballot) {
		p := mt.promised
		if p.Less(m.Ballot) {
			p = m.Ballot
		}
		r.setMeta(e, m.Key, p, m.Ballot)
	}
	if m.Found {
		r.apply(e, m.Key, m.Rec)
	}
	r.leases[m.Key] = slaveLease{exp: now + int64(r.ks.cfg.LeaseLength), ballot: m.Ballot}
	r.refreshAffiliates(e, m.Key)
	r.send(e, from, &GrantAck{Key: m.Key, Nonce: m.Nonce})
	delete(r.renewing, m.Key)
	for _, w := range rn.waiting {
		r.send(e, w.from, r.readResp(e, w.op, m.Key))
	}
}

// holders are the replicas whose lease the master must respect now: valid
// records, grants not yet acknowledged, everyone during the restart fence,
// and everyone but the old master during an election's fence.
func (r *Replica) holders(key string, now int64) (hs []wire.NodeID) {
	kf, fenced := r.keyFence[key]
	if now < r.fence || (fenced && now < kf.until) {
		for _, n := range r.others(key) {
			if now < r.fence || n != kf.except {
				hs = append(hs, n)
			}
		}
	}
	for n, exp := range r.records[key] { // lint:order-independent: sorted below
		if exp > now && !slices.Contains(hs, n) {
			hs = append(hs, n)
		}
	}
	for n, g := range r.pending[key] { // lint:order-independent: sorted below
		if g.expiry > now && !slices.Contains(hs, n) {
			hs = append(hs, n)
		}
	}
	affs, _ := r.affHolders(key, now)
	for _, a := range affs {
		if !slices.Contains(hs, a) {
			hs = append(hs, a)
		}
	}
	slices.Sort(hs)
	return hs
}

func (r *Replica) expiryOf(key string, n wire.NodeID) int64 {
	exp := max(r.records[key][n], r.fence)
	if g, ok := r.pending[key][n]; ok && g.expiry > exp {
		exp = g.expiry
	}
	if kf, ok := r.keyFence[key]; ok && n != kf.except && kf.until > exp {
		exp = kf.until
	}
	affs, exps := r.affHolders(key, 0)
	if i := slices.Index(affs, n); i >= 0 {
		exp = max(exp, exps[i])
	}
	return exp
}

func (r *Replica) onRenew(e env.Env, from wire.NodeID, m *Renew) {
	mt := r.meta(e, m.Key)
	if mt.accepted.Node != r.id {
		r.send(e, from, &Grant{Key: m.Key, Nonce: m.Nonce, Redirect: true, Ballot: r.known(e, m.Key)})
		return
	}
	if !r.isMaster(mt) || r.migrating[m.Key] != nil || r.campaigns[m.Key] != nil {
		return // mastership is moving; the replica asks again
	}
	if now := e.Now(); r.mlease[m.Key] <= now {
		r.confirm(e, m.Key, nil, &waitRenew{from, m.Nonce})
		return
	}
	r.grant(e, from, m.Key, m.Nonce)
}

// grant hands out a lease; only a master holding its master lease grants.
func (r *Replica) grant(e env.Env, to wire.NodeID, key string, nonce uint64) {
	now := e.Now()
	// The election fence bounds only leases granted under a master lease
	// (doc.go, "Masters").
	env.Invariant(e, r.isMaster(r.meta(e, key)) && r.mlease[key] > now, "lease: %q granted without a master lease (ends %d, now %d)", key, r.mlease[key], now)
	r.refreshMaster(e, key, now)
	if r.pending[key] == nil {
		r.pending[key] = map[wire.NodeID]grant{}
	}
	// The grant is a lease from the moment it leaves: the replica may start
	// it any time within RenewTimeout of asking, which precedes this.
	r.markActive(e)
	r.pending[key][to] = grant{nonce: nonce, expiry: now + r.ks.stretch(r.ks.cfg.RenewTimeout+r.ks.cfg.LeaseLength)}
	rec, ok := r.get(e, key)
	r.stats.Grants++
	r.send(e, to, &Grant{Key: key, Nonce: nonce, Found: ok, Rec: rec, Ballot: r.meta(e, key).accepted})
}

// onGrantAck turns a pending grant into a record that starts now, as the
// paper does, stretched for drift.
func (r *Replica) onGrantAck(e env.Env, from wire.NodeID, m *GrantAck) {
	g, ok := r.pending[m.Key][from]
	if !ok || g.nonce != m.Nonce {
		return
	}
	delete(r.pending[m.Key], from)
	if r.records[m.Key] == nil {
		r.records[m.Key] = map[wire.NodeID]int64{}
	}
	r.records[m.Key][from] = e.Now() + r.ks.stretch(r.ks.cfg.LeaseLength)
}

// onMWrite is GlobLease Alg. 2 at the master.
func (r *Replica) onMWrite(e env.Env, from wire.NodeID, m *MWrite) {
	if m.Inc != r.inc {
		r.send(e, from, &MWriteResp{Op: m.Op, Key: m.Key, Stale: true, Inc: r.inc})
		return
	}
	if !r.firstCopy(e, from, m.Op) {
		return
	}
	r.masterWrite(e, from, m, false)
}

// masterWrite orders one write at the master: refused or redirected if
// this node cannot order it now, checked first if it is conditional.
// recommitted is as in condWait.
func (r *Replica) masterWrite(e env.Env, from wire.NodeID, m *MWrite, recommitted bool) {
	mt := r.meta(e, m.Key)
	if mt.accepted.Node != r.id {
		r.send(e, from, &MWriteResp{Op: m.Op, Key: m.Key, Redirect: true, Master: r.known(e, m.Key)})
		return
	}
	if !r.isMaster(mt) || r.migrating[m.Key] != nil || r.campaigns[m.Key] != nil || r.draining[m.Key] != nil {
		// A key draining for a migration takes no new write: otherwise
		// steady writes would keep one in progress and starve the move.
		r.send(e, from, &MWriteResp{Op: m.Op, Key: m.Key, Retry: true, Master: mt.accepted})
		return
	}
	now := e.Now()
	if r.ks.cfg.AutoMigrate && m.Origin >= 0 && m.Origin < len(r.ks.topo.World.Regions) {
		o := r.origins[m.Key]
		if o == nil {
			o = make([]int, len(r.ks.topo.World.Regions))
			r.origins[m.Key] = o
		}
		o[m.Origin]++
	}
	r.masterUse[m.Key] = now
	cur, exists := r.get(e, m.Key)
	if m.Cond && !r.condHolds(e, from, m, cur, exists, recommitted) {
		return
	}
	seq := uint64(1)
	if exists && ballotOf(cur.Version) == mt.accepted.N {
		seq = seqOf(cur.Version) + 1
	}
	rec := m.Rec
	rec.Version = stamp(mt.accepted, seq)
	// A master's writes order after everything its store holds: a replica
	// holds no write of a later mastership than the one it accepted.
	env.Invariant(e, !exists || cur.Version.Less(rec.Version), "lease: master of %q stamped %v at or below its stored %v", m.Key, rec.Version, cur.Version)
	r.apply(e, m.Key, rec)
	others := r.others(m.Key)
	// A conditional write is always an active update: its success must be
	// on a majority, or a later master could lose it after a later
	// conditional write was decided against it.
	if m.Passive && !m.Cond && exists && r.mlease[m.Key] > now && len(r.holders(m.Key, now)) == 0 {
		// Passive update: no valid lease anywhere, so the local write is
		// enough; the others catch up lazily.
		for _, n := range others {
			r.send(e, n, &Update{Key: m.Key, Rec: rec, Ballot: mt.accepted})
		}
		affs, _ := r.affHolders(m.Key, now)
		for _, a := range affs {
			e.Send(a, &SecUpdate{Key: m.Key, Rec: rec})
		}
		r.send(e, from, &MWriteResp{Op: m.Op, Key: m.Key, Version: rec.Version, Master: mt.accepted})
		return
	}
	// Active update: a majority, including every lease holder.
	r.activeUpdate(e, &write{from: from, op: m.Op, key: m.Key, ballot: mt.accepted, version: rec.Version}, rec)
}

// activeUpdate sends w's record rec to every replica and affiliate of the
// key and completes w once a majority and every lease holder have it.
func (r *Replica) activeUpdate(e env.Env, w *write, rec store.Record) {
	now := e.Now()
	r.nextOp++
	w.id, w.acked = r.nextOp, map[wire.NodeID]bool{}
	r.writes[w.id] = w
	r.inflight[w.key]++
	w.timeout = e.SetTimer(r.ks.cfg.WriteTimeout, &leaseTimer{kind: timerWriteTimeout, op: w.id})
	r.stats.Invalidations += uint64(len(r.holders(w.key, now)))
	for _, n := range r.others(w.key) {
		r.send(e, n, &Update{Op: w.id, Key: w.key, Rec: rec, Active: true, Ballot: w.ballot})
	}
	affs, _ := r.affHolders(w.key, now)
	for _, a := range affs {
		e.Send(a, &SecUpdate{Op: w.id, Key: w.key, Rec: rec})
	}
	if r.writes[w.id] != nil {
		r.check(e, w)
	}
}

// condHolds checks conditional write m against the key's current record
// at its master (doc.go, "Conditional writes"). If the condition holds the
// write goes on. If not, it is answered Conflict with the current version
// — but only once that version is known to be on a majority, since a
// record that is not could be dropped by a later master and the conflict
// would then have observed a write that never happened: until then m
// waits for the key's writes in progress to end, and if none is, for the
// record to be replicated again. It reports whether the write goes on.
func (r *Replica) condHolds(e env.Env, from wire.NodeID, m *MWrite, cur store.Record, exists, recommitted bool) bool {
	if m.Expected.Holds(cur.Version, exists, cur.Tombstone) || r.ks.cfg.ignoreCond {
		return true
	}
	if !exists || r.committed[m.Key] == cur.Version || r.ks.cfg.eagerConflicts {
		r.send(e, from, &MWriteResp{Op: m.Op, Key: m.Key, Conflict: true, Version: cur.Version, Master: r.meta(e, m.Key).accepted})
		return false
	}
	if recommitted && r.inflight[m.Key] == 0 {
		// The record could not be replicated again in time.
		r.send(e, from, &MWriteResp{Op: m.Op, Key: m.Key, Retry: true, Master: r.meta(e, m.Key).accepted})
		return false
	}
	if r.inflight[m.Key] == 0 {
		r.activeUpdate(e, &write{recommit: true, key: m.Key, ballot: r.meta(e, m.Key).accepted, version: cur.Version}, cur)
		recommitted = true
	}
	r.condWaits[m.Key] = append(r.condWaits[m.Key], condWait{from: from, m: m, recommitted: recommitted})
	return false
}

// onUpdate applies a write of a mastership this replica has not promised
// to refuse; a later mastership than it knows teaches it (the master could
// only send it after a majority accepted).
func (r *Replica) onUpdate(e env.Env, from wire.NodeID, m *Update) {
	mt := r.meta(e, m.Key)
	if m.Ballot.Less(mt.promised) {
		if m.Active {
			r.send(e, from, &UpdateAck{Op: m.Op, Key: m.Key, Ballot: mt.accepted})
		}
		return
	}
	if mt.accepted.Less(m.Ballot) {
		r.adopt(e, m.Key, m.Ballot)
	}
	r.apply(e, m.Key, m.Rec)
	if !r.forwardUpdate(e, from, m) && m.Active {
		r.send(e, from, &UpdateAck{Op: m.Op, Key: m.Key, OK: true, Ballot: m.Ballot})
	}
}

// adopt makes b this replica's mastership of key (b is at least its
// promise); a master it replaces steps down.
func (r *Replica) adopt(e env.Env, key string, b Ballot) {
	mt := r.meta(e, key)
	wasMaster := mt.accepted.Node == r.id && b.Node != r.id
	r.setMeta(e, key, b, b)
	if wasMaster {
		r.stepDown(e, key)
	}
}

func (r *Replica) onUpdateAck(e env.Env, from wire.NodeID, m *UpdateAck) {
	w := r.writes[m.Op]
	if w == nil || w.key != m.Key {
		return
	}
	if !m.OK {
		// The replica promised a later ballot. If a later mastership was
		// accepted, this one is over; otherwise (a candidacy) the write
		// goes on without this replica — and still waits out its lease.
		if w.ballot.Less(m.Ballot) {
			r.superseded(e, m.Key, m.Ballot)
		}
		return
	}
	w.acked[from] = true
	r.check(e, w)
}

// check completes an active write once a majority of the group has it and
// no replica holding a lease lacks it; otherwise it waits for acks, or for
// the earliest unacknowledged lease to expire.
func (r *Replica) check(e env.Env, w *write) {
	now := e.Now()
	var wait int64
	for _, h := range r.holders(w.key, now) {
		if !w.acked[h] {
			exp := r.expiryOf(w.key, h)
			if wait == 0 || exp < wait {
				wait = exp
			}
		}
	}
	// The majority is of the key's group: affiliated nodes' acks (they
	// hold secondary leases) do not count toward it.
	members := 1
	for _, n := range r.others(w.key) {
		if w.acked[n] {
			members++
		}
	}
	if wait == 0 && members >= r.ks.majority() {
		r.finishWrite(e, w, false)
		return
	}
	if wait > 0 {
		e.CancelTimer(w.recheck)
		w.recheck = e.SetTimer(time.Duration(wait-now)+time.Microsecond, &leaseTimer{kind: timerRecheck, op: w.id})
	}
}

func (r *Replica) finishWrite(e env.Env, w *write, failed bool) {
	delete(r.writes, w.id)
	if r.inflight[w.key]--; r.inflight[w.key] <= 0 {
		delete(r.inflight, w.key)
	}
	e.CancelTimer(w.timeout)
	e.CancelTimer(w.recheck)
	if !failed && r.committed[w.key].Less(w.version) {
		r.committed[w.key] = w.version
	}
	if !w.recommit {
		resp := &MWriteResp{Op: w.op, Key: w.key, Version: w.version, Failed: failed, Master: w.ballot}
		if failed {
			resp.Version = wire.Version{}
		}
		r.send(e, w.from, resp)
	}
	if waiting := r.draining[w.key]; waiting != nil && r.inflight[w.key] == 0 {
		// The key has drained: the migrations waiting for it go on (or,
		// if this node stepped down meanwhile, are redirected).
		delete(r.draining, w.key)
		for _, wm := range waiting {
			r.migrate(e, wm.from, wm.m)
		}
	}
	if waiting := r.condWaits[w.key]; waiting != nil && r.inflight[w.key] == 0 {
		// Conditional writes waiting for the key's writes are decided
		// again, in arrival order, against the record they left.
		delete(r.condWaits, w.key)
		for _, c := range waiting {
			r.masterWrite(e, c.from, c.m, c.recommitted)
		}
	}
}

// refreshMaster notes a use of this master's lease on key: the keep-alive
// renews the leases of used keys before they run out, so reads at the
// master rarely wait for a confirmation.
func (r *Replica) refreshMaster(e env.Env, key string, now int64) {
	r.masterUse[key] = now // keepalive.go renews it in the background
}

// confirm adds a waiting read or renewal to key's confirmation round in
// flight, starting one if none is: the master's heartbeat to its group.
func (r *Replica) confirm(e env.Env, key string, read *waitRead, renew *waitRenew) {
	c := r.confirms[key]
	fresh := c == nil
	if fresh {
		c = &confirmRound{}
		r.confirms[key] = c
	}
	if read != nil {
		c.reads = append(c.reads, *read)
	}
	if renew != nil {
		c.renews = append(c.renews, *renew)
	}
	if fresh {
		r.sendConfirm(e, key, c)
	}
}

func (r *Replica) sendConfirm(e env.Env, key string, c *confirmRound) {
	c.nonce = e.Rand().Uint64() | 1
	c.sent = e.Now()
	c.acks = map[wire.NodeID]bool{r.id: true}
	r.stats.Confirms++
	b := r.meta(e, key).accepted
	for _, n := range r.others(key) {
		e.Send(n, &Confirm{Key: key, Nonce: c.nonce, Ballot: b})
	}
	e.SetTimer(r.ks.cfg.RenewTimeout, &leaseTimer{kind: timerConfirm, key: key, nonce: c.nonce})
	r.confirmed(e, key, c)
}

// onConfirm: a replica that follows the confirming master promises not to
// vote against it for MasterLease, stretched for drift (doc.go, "Masters").
func (r *Replica) onConfirm(e env.Env, from wire.NodeID, m *Confirm) {
	ok, known := r.confirmKey(e, m.Key, m.Ballot)
	r.send(e, from, &ConfirmAck{Key: m.Key, Nonce: m.Nonce, OK: ok, Ballot: known})
}

func (r *Replica) onConfirmAck(e env.Env, from wire.NodeID, m *ConfirmAck) {
	c := r.confirms[m.Key]
	if c == nil || c.nonce != m.Nonce {
		return
	}
	if !m.OK {
		if r.meta(e, m.Key).accepted.Less(m.Ballot) {
			r.superseded(e, m.Key, m.Ballot)
		}
		return
	}
	c.acks[from] = true
	r.confirmed(e, m.Key, c)
}

// confirmed grants the master lease once a majority confirmed: it runs
// MasterLease on the master's clock from when the round was sent, so it
// ends before any confirming replica's promise does.
func (r *Replica) confirmed(e env.Env, key string, c *confirmRound) {
	if len(c.acks) < r.ks.majority() {
		return
	}
	delete(r.confirms, key)
	r.mlease[key] = max(r.mlease[key], c.sent+int64(r.ks.cfg.MasterLease)) // never shrinks: a published read may rest on it
	r.masterUse[key] = e.Now()
	r.refreshAffiliates(e, key)
	mt := r.meta(e, key)
	ok := r.isMaster(mt) && r.migrating[key] == nil && r.campaigns[key] == nil
	for _, w := range c.reads {
		if ok {
			r.send(e, w.from, r.readResp(e, w.op, key))
		} else {
			r.send(e, w.from, &LReadResp{Op: w.op, Key: key, Retry: true})
		}
	}
	if ok {
		for _, w := range c.renews {
			r.grant(e, w.from, key, w.nonce)
		}
	}
	for _, w := range c.moves {
		r.migrate(e, w.from, w.m)
	}
}

// superseded ends this node's mastership of key on learning that a later
// one was accepted: it promises that ballot (so it stops acting as master
// durably) before forgetting its lease records.
func (r *Replica) superseded(e env.Env, key string, b Ballot) {
	mt := r.meta(e, key)
	if mt.promised.Less(b) {
		r.setMeta(e, key, b, mt.accepted)
	}
	r.hint(e, key, b)
	r.stepDown(e, key)
}

// stepDown ends this node's mastership of key: it learned of a later one.
// Only call it once this node no longer counts as master (isMaster false):
// it forgets the lease records a master must honour.
// Writes in progress end with an unknown outcome; waiting reads are told
// to retry; waiting renewals are sent to the newer master.
func (r *Replica) stepDown(e env.Env, key string) {
	env.WithdrawRead(e, key)
	delete(r.committed, key)
	delete(r.mlease, key)
	delete(r.records, key)
	delete(r.pending, key)
	delete(r.keyFence, key)
	delete(r.origins, key)
	var ws []*write
	for _, w := range r.writes { // lint:order-independent: sorted below
		if w.key == key {
			ws = append(ws, w)
		}
	}
	slices.SortFunc(ws, func(a, b *write) int { return cmp.Compare(a.id, b.id) })
	for _, w := range ws {
		r.finishWrite(e, w, true)
	}
	if c := r.confirms[key]; c != nil {
		delete(r.confirms, key)
		for _, w := range c.reads {
			r.send(e, w.from, &LReadResp{Op: w.op, Key: key, Retry: true})
		}
		for _, w := range c.renews {
			r.send(e, w.from, &Grant{Key: key, Nonce: w.nonce, Redirect: true, Ballot: r.known(e, key)})
		}
		for _, w := range c.moves {
			r.send(e, w.from, &MigrateResp{Op: w.m.Op, Key: key, Redirect: true, Master: r.known(e, key)})
		}
	}
	if mg := r.migrating[key]; mg != nil {
		delete(r.migrating, key)
		r.answerMigration(e, key, mg, "", r.known(e, key))
	}
}

// Elections (GlobLease §III.E's master failure, as single-decree Paxos over
// the key's group; doc.go, "Masters").

// campaignFor starts an election for key with this node as candidate.
// handoff is set when the old master asked for it (a migration, or this
// node taking a key back after a failed one).
func (r *Replica) campaignFor(e env.Env, key string, h *Handoff, notify wire.NodeID) {
	if r.campaigns[key] != nil {
		return
	}
	now := e.Now()
	mt := r.meta(e, key)
	if h == nil && (now < r.voteFence || now < r.voteBlock[key]) {
		return // bound by a recent confirmation: the master may be alive
	}
	n := max(mt.promised.N, r.known(e, key).N) + 1
	c := &campaign{ballot: Ballot{N: n, Node: r.id}, old: mt.accepted, phase: 1, promises: map[wire.NodeID]bool{r.id: true}, notify: notify}
	c.best, c.found = r.get(e, key)
	if h != nil {
		c.consent, c.inherit, c.holders = true, true, h.Holders
		c.old = h.From
		if h.Found && (!c.found || c.best.Version.Less(h.Rec.Version)) {
			c.found, c.best = true, h.Rec
		}
	}
	if mt.accepted != c.old {
		c.inherit = false
	}
	c.newest = c.old
	if c.newest.Less(mt.accepted) {
		c.newest = mt.accepted
	}
	r.campaigns[key] = c
	r.setMeta(e, key, c.ballot, mt.accepted)
	if mt.accepted.Node == r.id && !(h != nil && h.From == mt.accepted) {
		r.stepDown(e, key)
	}
	for _, o := range r.others(key) {
		e.Send(o, &Prepare{Key: key, Ballot: c.ballot, Handoff: c.old, Consent: c.consent})
	}
	e.SetTimer(r.ks.cfg.ElectionTimeout, &leaseTimer{kind: timerCampaign, key: key, nonce: c.ballot.N})
	r.promised(e, key, c)
}

// onPrepare: promise unless a smaller-or-equal ballot was promised, or
// this replica is bound to a master that confirmed recently (the master's
// lease) and that master did not consent.
func (r *Replica) onPrepare(e env.Env, from wire.NodeID, m *Prepare) {
	mt := r.meta(e, m.Key)
	now := e.Now()
	if m.Ballot == mt.promised {
		// a duplicate: answer again
	} else if m.Ballot.N <= mt.promised.N {
		r.send(e, from, &Promise{Key: m.Key, Ballot: m.Ballot, Known: mt.promised})
		return
	} else {
		consented := m.Consent && m.Handoff == mt.accepted
		bound := now < r.voteFence || now < r.voteBlock[m.Key] ||
			(r.isMaster(mt) && r.mlease[m.Key] > now && r.migrating[m.Key] == nil)
		if bound && !consented {
			r.send(e, from, &Promise{Key: m.Key, Ballot: m.Ballot, Known: mt.accepted})
			return
		}
		wasMaster := mt.accepted.Node == r.id
		r.setMeta(e, m.Key, m.Ballot, mt.accepted)
		if wasMaster && r.migrating[m.Key] == nil {
			r.stepDown(e, m.Key)
		}
		if c := r.campaigns[m.Key]; c != nil && c.ballot.Less(m.Ballot) {
			r.endCampaign(e, m.Key, c, false)
		}
	}
	rec, found := r.get(e, m.Key)
	r.send(e, from, &Promise{Key: m.Key, Ballot: m.Ballot, OK: true, Known: mt.accepted, Found: found, Rec: rec})
}

func (r *Replica) onPromise(e env.Env, from wire.NodeID, m *Promise) {
	c := r.campaigns[m.Key]
	if c == nil || c.ballot != m.Ballot || c.phase != 1 {
		return
	}
	if !m.OK {
		// A larger ballot, or a replica still bound to a live master.
		r.hint(e, m.Key, m.Known)
		c.rejects++
		if m.Known.N >= c.ballot.N || c.rejects > r.ks.group-r.ks.majority() {
			r.endCampaign(e, m.Key, c, false)
		}
		return
	}
	c.promises[from] = true
	if m.Known != c.old {
		c.inherit = false
	}
	if c.newest.Less(m.Known) {
		c.newest = m.Known
	}
	if m.Found && (!c.found || c.best.Version.Less(m.Rec.Version)) {
		c.found, c.best = true, m.Rec
	}
	r.promised(e, m.Key, c)
}

// promised moves to phase 2 once a majority promised: the candidate takes
// the newest record any of them holds — every completed write is on a
// majority, so it is among them — and asks the group to accept.
func (r *Replica) promised(e env.Env, key string, c *campaign) {
	if c.phase != 1 || len(c.promises) < r.ks.majority() {
		return
	}
	c.phase = 2
	c.sent = e.Now()
	c.accepted = map[wire.NodeID]bool{r.id: true}
	// If this node wins, it will hold a fence or inherited lease records
	// only in memory: a restart must fence instead (Start).
	r.markActive(e)
	if c.found {
		r.apply(e, key, c.best)
	}
	r.setMeta(e, key, c.ballot, c.ballot)
	for _, o := range r.others(key) {
		e.Send(o, &Accept{Key: key, Ballot: c.ballot, Found: c.found, Rec: c.best})
	}
	r.acceptedBy(e, key, c)
}

func (r *Replica) onAccept(e env.Env, from wire.NodeID, m *Accept) {
	mt := r.meta(e, m.Key)
	if m.Ballot.Less(mt.promised) {
		r.send(e, from, &Accepted{Key: m.Key, Ballot: m.Ballot, Known: mt.promised})
		return
	}
	if mt.accepted != m.Ballot {
		r.adopt(e, m.Key, m.Ballot)
	}
	if m.Found {
		r.apply(e, m.Key, m.Rec)
	}
	r.markActive(e)
	r.voteBlock[m.Key] = e.Now() + r.ks.stretch(r.ks.cfg.MasterLease)
	r.send(e, from, &Accepted{Key: m.Key, Ballot: m.Ballot, OK: true})
	if rn := r.renewing[m.Key]; rn != nil && m.Ballot.Node != r.id {
		r.requestLease(e, m.Key, rn) // the new master may answer at once
	}
}

func (r *Replica) onAccepted(e env.Env, from wire.NodeID, m *Accepted) {
	c := r.campaigns[m.Key]
	if c == nil || c.ballot != m.Ballot || c.phase != 2 {
		return
	}
	if !m.OK {
		r.hint(e, m.Key, m.Known)
		r.endCampaign(e, m.Key, c, false)
		return
	}
	c.accepted[from] = true
	r.acceptedBy(e, m.Key, c)
}

// acceptedBy makes the candidate master once a majority accepted. Its
// master lease runs from when the Accepts left (each acceptor promised
// like a confirmation). Leases the old master granted are respected: a
// handoff brings their records; after an election, where they are unknown,
// every replica but the old master counts as a holder until any lease the
// old master could have granted — only under its master lease, which ended
// before a majority could promise — has expired.
func (r *Replica) acceptedBy(e env.Env, key string, c *campaign) {
	if c.phase != 2 || len(c.accepted) < r.ks.majority() {
		return
	}
	now := e.Now()
	r.mlease[key] = max(r.mlease[key], c.sent+int64(r.ks.cfg.MasterLease)) // never shrinks: a published read may rest on it
	if c.inherit {
		r.records[key] = map[wire.NodeID]int64{}
		for _, h := range c.holders {
			if h.Node != r.id && h.Remaining > 0 && slices.Contains(r.ks.Replicas(nil, key), h.Node) {
				r.records[key][h.Node] = now + int64(float64(h.Remaining)*r.ks.recordFactor)
			}
		}
	} else if !r.ks.cfg.noElectionFence {
		r.keyFence[key] = keyFence{until: now + r.ks.stretch(r.ks.cfg.LeaseLength+r.ks.cfg.RenewTimeout), except: c.newest.Node}
	}
	delete(r.leases, key)
	r.endCampaign(e, key, c, true)
	// Reads that waited here for the old master are now the master's.
	if rn := r.renewing[key]; rn != nil {
		delete(r.renewing, key)
		for _, w := range rn.waiting {
			r.send(e, w.from, r.readResp(e, w.op, key))
		}
	}
}

func (r *Replica) endCampaign(e env.Env, key string, c *campaign, won bool) {
	delete(r.campaigns, key)
	switch {
	case won && c.consent && c.notify == r.id:
		r.stats.Rollbacks++
	case won && c.consent:
		r.stats.Migrations++
	case won:
		r.stats.Elections++
	}
	if c.consent {
		r.send(e, c.notify, &HandoffDone{Key: key, OK: won, Ballot: c.ballot})
	}
}

// Migration (GlobLease §III.E: two phases with echo correction and
// rollback): the master freezes the key, hands its record and lease
// records to the target, which is elected with the old master's consent;
// members that missed it are corrected by redirects (echoes). If the
// target does not take over in time, the old master takes the key back
// the same way.

func (r *Replica) onMigrate(e env.Env, from wire.NodeID, m *Migrate) {
	if m.Inc != r.inc {
		r.send(e, from, &MigrateResp{Op: m.Op, Key: m.Key, Stale: true, Inc: r.inc})
		return
	}
	if r.firstCopy(e, from, m.Op) {
		r.migrate(e, from, m)
	}
}

func (r *Replica) migrate(e env.Env, from wire.NodeID, m *Migrate) {
	mt := r.meta(e, m.Key)
	resp := &MigrateResp{Op: m.Op, Key: m.Key, Master: mt.accepted}
	switch {
	case mt.accepted.Node != r.id:
		resp.Redirect, resp.Master = true, r.known(e, m.Key)
	case m.Region < 0 || m.Region >= len(r.ks.topo.World.Regions):
		resp.Err = fmt.Sprintf("unknown region %d", m.Region)
	case r.ks.topo.RegionOf(r.id) == m.Region:
		// already there
	case !r.isMaster(mt) || r.migrating[m.Key] != nil || r.campaigns[m.Key] != nil:
		resp.Err, resp.Retry = "the key's mastership is already moving", true
	case r.mlease[m.Key] <= e.Now():
		// Only a master sure of its mastership hands it over: confirm first.
		r.confirm(e, m.Key, nil, nil)
		r.confirms[m.Key].moves = append(r.confirms[m.Key].moves, waitMigrate{from, m})
		return
	case r.inflight[m.Key] > 0:
		// Drain: refuse new writes to the key and move it once the writes
		// in progress end (finishWrite), which takes at most WriteTimeout.
		r.draining[m.Key] = append(r.draining[m.Key], waitMigrate{from, m})
		return
	default:
		if err := r.startMigration(e, m.Key, m.Region, &migration{from: from, op: m.Op}); err != "" {
			resp.Err, resp.Retry = err, true
			break
		}
		return // answered when the handoff ends
	}
	r.send(e, from, resp)
}

func (r *Replica) startMigration(e env.Env, key string, region int, mg *migration) string {
	now := e.Now()
	if r.inflight[key] > 0 {
		return "writes to the key are in progress"
	}
	if r.mlease[key] <= now {
		r.confirm(e, key, nil, nil)
		return "the master is confirming its mastership"
	}
	mg.target = r.ks.ring.Owner(region, key)
	r.migrating[key] = mg
	if !r.ks.cfg.keepPublishedOnFreeze {
		env.WithdrawRead(e, key) // the key is frozen: its reads are refused
	}
	r.send(e, mg.target, r.handoff(e, key))
	e.SetTimer(2*r.ks.cfg.ElectionTimeout, &leaseTimer{kind: timerMigrate, key: key, nonce: uint64(mg.target)})
	return ""
}

// handoff is what this master hands over: its mastership, the key's
// record, and every lease it must still respect, as time left on its clock.
func (r *Replica) handoff(e env.Env, key string) *Handoff {
	now := e.Now()
	h := &Handoff{Key: key, From: r.meta(e, key).accepted}
	h.Rec, h.Found = r.get(e, key)
	for _, n := range r.others(key) {
		if exp := r.expiryOf(key, n); exp > now {
			h.Holders = append(h.Holders, HolderLease{Node: n, Remaining: exp - now})
		}
	}
	// This node's affiliates hold leases from within its master lease: the
	// new master must wait for this node (which forwards to them) until
	// they end.
	if _, exps := r.affHolders(key, now); len(exps) > 0 {
		h.Holders = append(h.Holders, HolderLease{Node: r.id, Remaining: slices.Max(exps) - now})
	}
	return h
}

// onHandoff: the target runs the election with the old master's consent.
func (r *Replica) onHandoff(e env.Env, from wire.NodeID, m *Handoff) {
	if mt := r.meta(e, m.Key); m.From.Less(mt.accepted) || r.campaigns[m.Key] != nil {
		r.send(e, from, &HandoffDone{Key: m.Key, Ballot: r.known(e, m.Key)})
		return
	}
	r.campaignFor(e, m.Key, m, from)
}

func (r *Replica) onHandoffDone(e env.Env, from wire.NodeID, m *HandoffDone) {
	mg := r.migrating[m.Key]
	if mg == nil || mg.target != from {
		return
	}
	if m.OK {
		delete(r.migrating, m.Key)
		if r.meta(e, m.Key).accepted.Less(m.Ballot) {
			r.adopt(e, m.Key, m.Ballot)
		}
		r.hint(e, m.Key, m.Ballot)
		r.stepDown(e, m.Key)
		r.answerMigration(e, m.Key, mg, "", m.Ballot)
		return
	}
	r.hint(e, m.Key, m.Ballot)
	r.rollback(e, m.Key, mg)
}

// rollback takes a key back after a handoff that did not complete: an
// election with this (old) master's own consent, carrying its records.
func (r *Replica) rollback(e env.Env, key string, mg *migration) {
	delete(r.migrating, key)
	h := r.handoff(e, key)
	r.answerMigration(e, key, mg, "the target did not take over in time; rolled back", h.From)
	r.campaignFor(e, key, h, r.id)
}

func (r *Replica) answerMigration(e env.Env, key string, mg *migration, errMsg string, b Ballot) {
	if mg.auto {
		return
	}
	r.send(e, mg.from, &MigrateResp{Op: mg.op, Key: key, Err: errMsg, Retry: errMsg != "", Master: b})
}

// autoMigrate moves each key whose writes mostly came from one other
// region in the last window (issue 5 item 4: follow the workload, per key).
func (r *Replica) autoMigrate(e env.Env) {
	keys := make([]string, 0, len(r.origins))
	for k := range r.origins { // lint:order-independent: sorted below
		keys = append(keys, k)
	}
	slices.Sort(keys)
	cfg := r.ks.cfg
	for _, k := range keys {
		o := r.origins[k]
		total, best := 0, r.region
		for reg, n := range o {
			total += n
			if n > o[best] {
				best = reg
			}
		}
		mt := r.meta(e, k)
		if best == r.region || o[best] < cfg.MigrateMinWrites || float64(o[best]) < cfg.MigrateThreshold*float64(total) ||
			!r.isMaster(mt) || r.migrating[k] != nil || r.campaigns[k] != nil {
			continue
		}
		r.startMigration(e, k, best, &migration{auto: true})
	}
	clear(r.origins)
}

// readReply is the answer to the gateway's read req that m answered.
func readReply(req *wire.Request, m *LReadResp) *wire.Reply {
	rep := &wire.Reply{ID: req.ID, Client: req.Client, Version: m.Rec.Version, Found: m.Found && !m.Rec.Tombstone}
	if rep.Found {
		rep.Value = m.Rec.Value
	}
	return rep
}

func (r *Replica) answerRead(e env.Env, from wire.NodeID, m *LReadResp) {
	g := r.ops[m.Op]
	if g == nil || g.req.Key != m.Key {
		return
	}
	host := r.ks.ring.Owner(r.region, m.Key)
	// An affiliate without a secondary lease, or one behind what this
	// gateway already returned for the key (the host applies updates
	// before its affiliates, so it is never behind them): ask the host.
	// Reads of a hot key through one gateway thus never go back in time.
	if from != host && (m.Moved || m.Rec.Version.Less(r.affSeen[m.Key])) {
		if m.Moved {
			r.dropAffiliates(m.Key)
		}
		if g.redirects < maxRedirects {
			g.redirects++
			r.send(e, host, &LRead{Op: m.Op, Key: m.Key})
			return
		}
	}
	if from == host && !m.Retry {
		if len(m.Affiliates) > 0 {
			r.affCache[m.Key] = m.Affiliates
		} else {
			r.dropAffiliates(m.Key)
		}
	}
	if _, hot := r.affCache[m.Key]; hot && !m.Retry && !m.Moved && r.affSeen[m.Key].Less(m.Rec.Version) {
		r.affSeen[m.Key] = m.Rec.Version
	}
	delete(r.ops, m.Op)
	e.CancelTimer(g.timeout)
	if m.Retry || m.Moved {
		e.Reply(&wire.Reply{ID: g.req.ID, Client: g.req.Client, Err: &wire.Error{Code: wire.ErrUnavailable, Msg: fmt.Sprintf("lease: the mastership of %q is moving; retry", m.Key)}})
		return
	}
	e.Reply(readReply(g.req, m))
}

// maxRedirects bounds how many echoes a gateway follows for one request.
const maxRedirects = 3

// redirect follows an echo to a later master, or gives up.
func (r *Replica) redirect(e env.Env, g *gop, b Ballot) bool {
	if !r.hint(e, g.req.Key, b) || g.redirects >= maxRedirects {
		return false
	}
	g.redirects++
	g.target = r.known(e, g.req.Key).Node
	r.attempt(e, g)
	return true
}

// answerWrite ends a write — ignoring answers to an earlier attempt (or
// duplicates of one) once the write was sent on to another master.
func (r *Replica) answerWrite(e env.Env, from wire.NodeID, m *MWriteResp) {
	g := r.ops[m.Op]
	if g == nil || g.req.Key != m.Key || from != g.target {
		return
	}
	if m.Stale {
		r.staleAttempt(e, m.Op, g, from, m.Inc, fmt.Sprintf("lease: the master of %q restarted; the write may or may not have been applied", m.Key))
		return
	}
	if m.Redirect && r.redirect(e, g, m.Master) {
		return
	}
	r.hint(e, m.Key, m.Master)
	delete(r.ops, m.Op)
	e.CancelTimer(g.timeout)
	rep := &wire.Reply{ID: g.req.ID, Client: g.req.Client, Version: m.Version}
	switch {
	case m.Redirect || m.Retry:
		// Every attempt was refused before it was written: each was
		// addressed to one incarnation of its target, which drops later
		// copies of a request it refused (requests.go).
		rep.Err = &wire.Error{Code: wire.ErrUnavailable, Msg: fmt.Sprintf("lease: the mastership of %q is moving; nothing was written; retry", m.Key)}
	case m.Failed:
		rep.Err = &wire.Error{Code: wire.ErrTimeout, Msg: "lease: the write did not reach a majority and every lease holder in time"}
	case m.Conflict:
		rep.Err = &wire.Error{Code: wire.ErrConflict, Msg: fmt.Sprintf("lease: %q is at version %v, not the expected %v; nothing was written", m.Key, m.Version, g.req.Expected)}
	}
	e.Reply(rep)
}

func (r *Replica) answerMigrate(e env.Env, from wire.NodeID, m *MigrateResp) {
	g := r.ops[m.Op]
	if g == nil || g.req.Key != m.Key || from != g.target {
		return
	}
	if m.Stale {
		r.staleAttempt(e, m.Op, g, from, m.Inc, fmt.Sprintf("lease: migrate %q: its master restarted; the migration may or may not have started", m.Key))
		return
	}
	if m.Redirect && r.redirect(e, g, m.Master) {
		return
	}
	delete(r.ops, m.Op)
	e.CancelTimer(g.timeout)
	rep := &wire.Reply{ID: g.req.ID, Client: g.req.Client}
	switch {
	case m.Redirect:
		rep.Err = &wire.Error{Code: wire.ErrUnavailable, Msg: fmt.Sprintf("lease: migrate %q: could not find its master; retry", m.Key)}
	case m.Err != "" && m.Retry:
		rep.Err = &wire.Error{Code: wire.ErrUnavailable, Msg: fmt.Sprintf("lease: migrate %q: %s; retry", m.Key, m.Err)}
	case m.Err != "":
		rep.Err = &wire.Error{Code: wire.ErrInvalid, Msg: fmt.Sprintf("lease: migrate %q: %s", m.Key, m.Err)}
	default:
		r.hint(e, m.Key, m.Master)
		rep.Found = true
		rep.Value = []byte(r.ks.topo.World.Regions[r.ks.topo.RegionOf(m.Master.Node)].Name)
	}
	e.Reply(rep)
}

// Timer implements env.Replica.
func (r *Replica) Timer(e env.Env, payload any) {
	t, ok := payload.(*leaseTimer)
	if !ok {
		return
	}
	now := e.Now()
	switch t.kind {
	case timerGateway:
		if g := r.ops[t.op]; g != nil {
			delete(r.ops, t.op)
			e.Reply(&wire.Reply{ID: g.req.ID, Client: g.req.Client, Err: &wire.Error{Code: wire.ErrTimeout, Msg: "lease: no answer in time"}})
		}
	case timerRenew:
		rn := r.renewing[t.key]
		if rn == nil || rn.nonce != t.nonce {
			return
		}
		// The grant was lost or late, or the master is gone: ask again,
		// and after ElectionTimeout stand for election.
		if now-rn.first >= int64(r.ks.cfg.ElectionTimeout) {
			r.campaignFor(e, t.key, nil, 0)
		}
		if r.renewing[t.key] == rn {
			r.requestLease(e, t.key, rn)
		}
	case timerRecheck:
		if w := r.writes[t.op]; w != nil {
			r.check(e, w)
		}
	case timerWriteTimeout:
		if w := r.writes[t.op]; w != nil {
			r.finishWrite(e, w, true)
		}
	case timerConfirm:
		if c := r.confirms[t.key]; c != nil && c.nonce == t.nonce {
			if r.isMaster(r.meta(e, t.key)) {
				r.sendConfirm(e, t.key, c)
			} else {
				r.stepDown(e, t.key)
			}
		}
	case timerCampaign:
		if c := r.campaigns[t.key]; c != nil && c.ballot.N == t.nonce {
			r.endCampaign(e, t.key, c, false)
		}
	case timerMigrate:
		if mg := r.migrating[t.key]; mg != nil && uint64(mg.target) == t.nonce {
			r.rollback(e, t.key, mg)
		}
	case timerAutoMigrate:
		r.autoMigrate(e)
		e.SetTimer(r.ks.cfg.MigrateWindow, &leaseTimer{kind: timerAutoMigrate})
	case timerKeepAlive:
		r.keepAlive(e)
		e.SetTimer(keepAlivePeriod(r.ks.cfg.MasterLease), &leaseTimer{kind: timerKeepAlive})
	case timerBatch:
		delete(r.batches, t.op)
	case timerSweep:
		r.sweep(e)
		e.SetTimer(r.ks.cfg.LeaseLength, &leaseTimer{kind: timerSweep})
	case timerHot:
		r.detectHot(e)
		e.SetTimer(r.ks.cfg.HotWindow, &leaseTimer{kind: timerHot})
	case timerHostWait:
		if w := r.hostWaits[t.op]; w != nil {
			r.checkHostWait(e, t.op, w)
		}
	}
}
