package rsm_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/protocol/rsm"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// The tests run a small protocol over one group: "rsmreg", a keyspace of
// registers replicated by every node of the topology (the group's
// members). Writes are proposals; reads wait for a ReadIndex read point
// and answer from the state machine, so every operation is linearizable.
// It is registered only in this test binary.

const regName = "rsmreg"

// regSettings are rsmreg's settings.
type regSettings struct {
	TickInterval  time.Duration `yaml:"tick_interval"`
	ElectionTicks int           `yaml:"election_ticks"`
	// RequestTimeout is how long a gateway waits for its proposal or read
	// before it answers timeout (outcome unknown). Default 2s.
	RequestTimeout time.Duration `yaml:"request_timeout"`
	// SnapshotEntries is the group's rsm Config.SnapshotEntries.
	SnapshotEntries int `yaml:"snapshot_entries"`
	// SkipHardState breaks persist before send (teeth).
	SkipHardState bool `yaml:"skip_hard_state"`
	// CompactFirst deletes compacted entries before storing the snapshot
	// that covers them (teeth).
	CompactFirst bool `yaml:"compact_first"`
}

func init() {
	protocol.Register(protocol.Definition{
		Name:         regName,
		Title:        "replicated registers (rsm test)",
		Summary:      "registers replicated by one raft group of every node",
		NewSettings:  func() any { return new(regSettings) },
		Build:        buildReg,
		MessageTypes: rsm.MessageTypes(),
	})
}

// regKeyspace is one run's keyspace. log is the run's one applied
// sequence: every member's Apply checks its command against it
// (agreement: every member's applied sequence is a prefix of one
// sequence).
type regKeyspace struct {
	t   *topo.Topology
	s   regSettings
	cfg rsm.Config
	log map[uint64]string
	// seq is the indices of the commands each member applied in its
	// current incarnation, or that the snapshot it restored covers.
	seq map[wire.NodeID][]uint64
	// members are the members' current incarnations.
	members map[wire.NodeID]*regReplica
	// counts are this run's snapshot events.
	counts snapCounts
}

// snapCounts counts what the snapshot code did: snapshots taken, restored
// at a member's start, and installed from a leader.
type snapCounts struct{ taken, restarts, installs int }

// snapEvents sums snapCounts over every run of the test binary (a swarm's
// runs count concurrently).
var snapEvents struct{ taken, restarts, installs atomic.Int64 }

// built is the keyspace buildReg built last, for tests that inspect a
// single run (runs in a swarm build theirs concurrently).
var built struct {
	sync.Mutex
	ks *regKeyspace
}

func buildReg(t *topo.Topology, settings any) (protocol.Keyspace, error) {
	s := *settings.(*regSettings)
	if s.RequestTimeout == 0 {
		s.RequestTimeout = 2 * time.Second
	}
	cfg := rsm.Config{Group: "reg", TickInterval: s.TickInterval, ElectionTicks: s.ElectionTicks, SnapshotEntries: s.SnapshotEntries}
	for _, n := range t.Nodes {
		cfg.Members = append(cfg.Members, n.ID)
	}
	if s.SkipHardState {
		rsm.SkipHardState(&cfg)
	}
	if s.CompactFirst {
		rsm.CompactFirst(&cfg)
	}
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ks := &regKeyspace{t: t, s: s, cfg: cfg, log: map[uint64]string{}, seq: map[wire.NodeID][]uint64{}, members: map[wire.NodeID]*regReplica{}}
	built.Lock()
	built.ks = ks
	built.Unlock()
	return ks, nil
}

func (k *regKeyspace) Factory() env.Factory {
	return func(id wire.NodeID) env.Replica {
		r := &regReplica{ks: k, vals: map[string]regVal{}, pending: map[uint64]pendingReq{}}
		r.g = rsm.New(k.cfg, r)
		k.members[id] = r
		return r
	}
}

func (k *regKeyspace) Replicas(dst []wire.NodeID, key string) []wire.NodeID {
	return append(dst, k.cfg.Members...)
}
func (k *regKeyspace) Settings() any             { s := k.s; return &s }
func (k *regKeyspace) Describe() string          { return "rsmreg: registers over one raft group; linearizable" }
func (k *regKeyspace) Model() string             { return "linearizable" }
func (k *regKeyspace) ClockBound() time.Duration { return 0 }
func (k *regKeyspace) Floor(int, protocol.Op, func(a, b int) time.Duration) time.Duration {
	return 0
}

// Load stores preloaded records under "reg/": a member's state machine
// falls back to them for keys no command has written.
func (k *regKeyspace) Load(key string, rec store.Record) (string, store.Record) {
	return "reg/" + key, rec
}

type regVal struct {
	v     string
	found bool
}

type pendingReq struct {
	req *wire.Request
}

// regReplica is one node: the group's member and a gateway.
type regReplica struct {
	ks      *regKeyspace
	g       *rsm.Group
	vals    map[string]regVal // the state machine: keys written by commands
	pending map[uint64]pendingReq
	token   uint64
	// last is the index of the last command applied or restored.
	last uint64
	// starting is set during Start (a Restore then is a restart's).
	starting bool
}

type expire struct{ token uint64 }

func (r *regReplica) Start(e env.Env) {
	r.ks.seq[e.Self()] = nil
	r.starting = true
	r.g.Start(e)
	r.starting = false
}

func (r *regReplica) Step(e env.Env, from wire.NodeID, m wire.Msg) { r.g.Step(e, from, m) }

func (r *regReplica) Timer(e env.Env, payload any) {
	if r.g.Timer(e, payload) {
		return
	}
	if x, ok := payload.(retry); ok {
		r.issue(e, x.token)
		return
	}
	if x, ok := payload.(expire); ok {
		if p, ok := r.pending[x.token]; ok {
			delete(r.pending, x.token)
			e.Reply(&wire.Reply{ID: p.req.ID, Client: p.req.Client, Err: &wire.Error{Code: wire.ErrTimeout, Msg: "rsmreg: no answer"}})
		}
	}
}

func (r *regReplica) Request(e env.Env, req *wire.Request) {
	switch req.Op {
	case wire.OpGet, wire.OpPut, wire.OpDelete:
	default:
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrInvalid, Msg: "rsmreg: unsupported"}})
		return
	}
	r.token++
	r.pending[r.token] = pendingReq{req}
	e.SetTimer(r.ks.s.RequestTimeout, expire{r.token})
	r.issue(e, r.token)
}

// retry re-issues a request that found no leader.
type retry struct{ token uint64 }

// issue hands request tok to the group; with no leader known it tries
// again a tick later (until it expires).
func (r *regReplica) issue(e env.Env, tok uint64) {
	p, ok := r.pending[tok]
	if !ok {
		return
	}
	var err error
	switch req := p.req; req.Op {
	case wire.OpGet:
		err = r.g.Read(e, tok)
	case wire.OpPut:
		err = r.g.Propose(e, []byte("P"+req.Key+"\x00"+string(req.Value)), tok)
	case wire.OpDelete:
		err = r.g.Propose(e, []byte("D"+req.Key), tok)
	}
	switch {
	case errors.Is(err, rsm.ErrNotLeader):
		e.SetTimer(r.ks.cfg.TickInterval, retry{tok})
	case err != nil: // dropped: it took no effect
		delete(r.pending, tok)
		e.Reply(&wire.Reply{ID: p.req.ID, Client: p.req.Client, Err: &wire.Error{Code: wire.ErrUnavailable, Msg: err.Error()}})
	}
}

// Apply implements rsm.StateMachine.
func (r *regReplica) Apply(e env.Env, index uint64, cmd []byte) []byte {
	c := string(cmd)
	r.last = index
	r.ks.seq[e.Self()] = append(r.ks.seq[e.Self()], index)
	if prev, ok := r.ks.log[index]; ok {
		env.Invariant(e, prev == c, "rsmreg: n%d applied %q at %d; another member applied %q", e.Self(), c, index, prev)
	} else {
		r.ks.log[index] = c
	}
	if !applyReg(r.vals, c) {
		env.Invariant(e, false, "rsmreg: bad command %q", c)
	}
	return nil
}

// applyReg applies command c to vals and reports whether it is one.
func applyReg(vals map[string]regVal, c string) bool {
	switch {
	case strings.HasPrefix(c, "P"):
		k, v, _ := strings.Cut(c[1:], "\x00")
		vals[k] = regVal{v, true}
	case strings.HasPrefix(c, "D"):
		vals[c[1:]] = regVal{}
	default:
		return false
	}
	return true
}

// Snapshot implements rsm.StateMachine: the last command's index, then
// the registers in key order.
func (r *regReplica) Snapshot(e env.Env) []byte {
	r.ks.counts.taken++
	snapEvents.taken.Add(1)
	b := wire.AppendUvarint(nil, r.last)
	b = wire.AppendUvarint(b, uint64(len(r.vals)))
	for _, k := range slices.Sorted(maps.Keys(r.vals)) {
		b = wire.AppendBool(wire.AppendString(wire.AppendString(b, k), r.vals[k].v), r.vals[k].found)
	}
	return b
}

// Restore implements rsm.StateMachine. The registers must be what the
// run's one command sequence makes of them up to the snapshot's last
// command (agreement through snapshots).
func (r *regReplica) Restore(e env.Env, data []byte) error {
	d := wire.NewDecoder(data)
	last, n := d.Uvarint(), d.Uvarint()
	vals := map[string]regVal{}
	for i := uint64(0); i < n && d.Err() == nil; i++ {
		k, v := d.String(), d.String()
		vals[k] = regVal{v, d.Bool()}
	}
	if d.Err() != nil || d.Len() != 0 {
		return fmt.Errorf("rsmreg: snapshot of %d bytes does not decode (%v)", len(data), d.Err())
	}
	want, seq := map[string]regVal{}, []uint64(nil)
	for _, i := range slices.Sorted(maps.Keys(r.ks.log)) {
		if i <= last {
			applyReg(want, r.ks.log[i])
			seq = append(seq, i)
		}
	}
	if !maps.Equal(vals, want) {
		return fmt.Errorf("rsmreg: n%d restored %v at command %d; the commands up to it make %v", e.Self(), vals, last, want)
	}
	r.vals, r.last, r.ks.seq[e.Self()] = vals, last, seq
	if r.starting {
		r.ks.counts.restarts++
		snapEvents.restarts.Add(1)
	} else {
		r.ks.counts.installs++
		snapEvents.installs.Add(1)
	}
	return nil
}

// Applied implements rsm.StateMachine.
func (r *regReplica) Applied(e env.Env, token uint64, _ []byte) {
	p, ok := r.pending[token]
	if !ok {
		return
	}
	delete(r.pending, token)
	e.Reply(&wire.Reply{ID: p.req.ID, Client: p.req.Client})
}

// Readable implements rsm.StateMachine.
func (r *regReplica) Readable(e env.Env, token uint64) {
	p, ok := r.pending[token]
	if !ok {
		return
	}
	delete(r.pending, token)
	rep := &wire.Reply{ID: p.req.ID, Client: p.req.Client}
	if v, ok := r.vals[p.req.Key]; ok {
		rep.Found, rep.Value = v.found, []byte(v.v)
	} else if rec, ok, err := e.Store().Get("reg/" + p.req.Key); err != nil {
		rep.Err = &wire.Error{Code: wire.ErrUnavailable, Msg: fmt.Sprintf("rsmreg: %v", err)}
	} else if ok && !rec.Tombstone {
		rep.Found, rep.Value = true, rec.Value
	}
	e.Reply(rep)
}
