package rsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/wire"
)

// NoLeader is Leader's answer when a member knows of no leader.
const NoLeader wire.NodeID = -1

// StateMachine is what a group replicates. A group calls it only from
// within the call into the group that caused it, on the member's event
// loop.
type StateMachine interface {
	// Apply applies the command committed at index. Every member applies
	// the same commands in the same order, each index at most once per
	// incarnation of the member, and never one a snapshot it restored
	// covers: a restarted member restores its latest snapshot and applies
	// the log after it. It must be deterministic: its result and its
	// effect depend only on the commands applied before (and the snapshot
	// restored).
	Apply(e env.Env, index uint64, cmd []byte) (result []byte)
	// Applied tells the member that proposed token (Propose) that its
	// command was applied, with Apply's result. It is called right after
	// that Apply, only on the proposing member and only in the
	// incarnation that proposed it. A command a member learns of by a
	// snapshot is never notified.
	Applied(e env.Env, token uint64, result []byte)
	// Readable tells the member that called Read(token) that its state
	// machine now reflects every command committed before the Read began:
	// a read of it now is linearizable.
	Readable(e env.Env, token uint64)
	// Snapshot encodes the whole replicated state: what every command
	// applied so far made of it, so that Restore of it on any member
	// leaves that member as if it had applied the same commands. It must
	// be deterministic (map keys sorted). State kept on the member's own
	// clock is not replicated and not encoded; Restore sets it as replay
	// would.
	Snapshot(e env.Env) []byte
	// Restore replaces the whole state with a Snapshot's: at Start, from
	// the member's stored snapshot, and when a lagging follower is sent
	// the leader's. An error fail-stops the member (a broken invariant:
	// the group never hands it anything Snapshot did not encode).
	Restore(e env.Env, data []byte) error
}

// NotLeaderError says a member knows no leader to take a proposal or a
// read. Hint is the leader it last knew of, or NoLeader.
type NotLeaderError struct {
	Group string
	Hint  wire.NodeID
}

func (e *NotLeaderError) Error() string {
	if e.Hint == NoLeader {
		return fmt.Sprintf("rsm: group %s: no leader", e.Group)
	}
	return fmt.Sprintf("rsm: group %s: not the leader (leader n%d)", e.Group, e.Hint)
}

// ErrNotLeader matches every *NotLeaderError with errors.Is.
var ErrNotLeader = errors.New("rsm: no leader")

// Is makes errors.Is(err, ErrNotLeader) hold.
func (e *NotLeaderError) Is(target error) bool { return target == ErrNotLeader }

// ErrDropped says raft dropped a proposal (a leadership transfer was in
// progress); it took no effect.
var ErrDropped = errors.New("rsm: proposal dropped")

// tick is the group's timer payload.
type tick struct{ group string }

// Group is one member's part in a replicated state machine group. The
// embedding replica calls Start from its Start, and routes to the group
// the messages (Step) and timers (Timer) that are the group's.
type Group struct {
	cfg Config
	sm  StateMachine
	rn  *raft.RawNode
	ms  *raft.MemoryStorage
	// incarnation tells this run of the member from earlier ones (drawn
	// at Start): proposals and reads carry it, so Applied and Readable
	// fire only for the incarnation that asked.
	incarnation uint64
	// applied is the index of the last entry applied (or restored from a
	// snapshot).
	applied uint64
	// snapIndex is the index of the latest snapshot stored (bootIndex:
	// none): the log is compacted up to it.
	snapIndex uint64
	// hi is the highest index whose entry key in the store may hold an
	// entry (storage.go): the entries a snapshot install must delete.
	hi uint64
	// ticks counts this incarnation's ticks. electionDue is the tick at
	// which a follower or candidate campaigns unless it hears from a
	// leader first (our own election timer: see doc.go, "Determinism").
	ticks, electionDue uint64
	// fruitless counts this member's campaigns since it last knew a
	// leader: each widens the next timeout's range (resetElection).
	fruitless uint
	// heard[i] is the tick at which Members[i] was last heard from (for
	// the leader's quorum check).
	heard []uint64
	// lastCheck is the tick of the leader's last quorum check.
	lastCheck uint64
	// reads are ReadIndex answers waiting for applied to reach index.
	reads []pendingRead
	// skipHardState breaks persist-before-send for the teeth test.
	skipHardState bool
	started       bool
}

type pendingRead struct{ index, token uint64 }

// New builds a member's group. It panics if cfg is invalid (a group's
// configuration is the embedding protocol's, validated when its keyspace
// is built: call cfg.Validate there).
func New(cfg Config, sm StateMachine) *Group {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	cfg.Members = slices.Clone(cfg.Members)
	return &Group{cfg: cfg, sm: sm, skipHardState: cfg.unsafeSkipHardState}
}

// Config is the group's configuration, defaults filled in.
func (g *Group) Config() Config { return g.cfg }

// Start loads the member's state from the store and starts its timer. A
// node that is not a member must not start the group.
func (g *Group) Start(e env.Env) {
	defer g.contain(e)
	if !env.Invariant(e, g.member(e.Self()) >= 0, "rsm: node n%d started group %s of %v", e.Self(), g.cfg.Group, g.cfg.Members) {
		return
	}
	ms, snap, hi, err := g.load(e.Store())
	if err != nil {
		e.FailStop(fmt.Errorf("rsm: group %s: loading: %w", g.cfg.Group, err))
		return
	}
	g.ms, g.hi = ms, hi
	g.applied, g.snapIndex = bootIndex, bootIndex
	if snap != nil && !g.restore(e, snap) {
		return
	}
	g.incarnation = e.Rand().Uint64()
	g.heard = make([]uint64, len(g.cfg.Members))
	if err := g.newRawNode(e); err != nil {
		e.FailStop(err)
		return
	}
	g.started = true
	e.SetTimer(g.cfg.TickInterval, tick{g.cfg.Group})
	if len(g.cfg.Members) == 1 {
		// A group of one elects itself at once: no one can compete, and
		// waiting an election timeout would only delay its first use.
		_ = g.rn.Campaign()
	}
	g.handleReady(e)
}

// newRawNode (re)builds the raft node over the in-memory storage: at Start,
// and when a leader steps down (a rebuilt node starts as a follower of no
// leader, from exactly the state it made durable).
func (g *Group) newRawNode(e env.Env) error {
	rn, err := raft.NewRawNode(&raft.Config{
		ID: raftID(e.Self()),
		// Raft draws its own election timeout from a global source we
		// cannot seed (crypto/rand); with an election tick it never
		// reaches, it never campaigns by itself and our election timer,
		// drawn from Env, decides (doc.go, "Determinism").
		ElectionTick:    neverTicks,
		HeartbeatTick:   g.cfg.HeartbeatTicks,
		Storage:         g.ms,
		Applied:         g.applied,
		MaxSizePerMsg:   g.cfg.MaxSizePerMsg,
		MaxInflightMsgs: g.cfg.MaxInflightMsgs,
		// MaxUncommittedEntriesSize bounds a leader's uncommitted tail.
		MaxUncommittedEntriesSize: 1 << 20,
		PreVote:                   true,
		ReadOnlyOption:            raft.ReadOnlySafe,
		Logger:                    quietLogger{},
	})
	if err != nil {
		return fmt.Errorf("rsm: group %s: %w", g.cfg.Group, err)
	}
	g.rn = rn
	g.resetElection(e)
	if len(g.cfg.Members) == 1 {
		// A group of one is its own majority: it need not wait out an
		// election timeout to lead.
		_ = g.rn.Campaign()
	}
	return nil
}

// neverTicks is raft's election tick: more ticks than any run lasts (at
// one tick a millisecond, 2^40 ticks are 35 years).
const neverTicks = 1 << 40

// resetElection draws the next election timeout from [E, E + E·(1+k))
// ticks, k the campaigns since a leader was last known (at most 3). Two
// survivors whose timeouts fall within about a one-way delay of each other
// both become candidates and split the vote; in a WAN group that happens
// often (TestFailover's tail was runs of up to six splits in a row at
// E·tick = 200ms and 100ms one way), and a wider range after each split
// makes the next one less likely (doc.go, "Elections").
func (g *Group) resetElection(e env.Env) {
	n := uint64(g.cfg.ElectionTicks)
	g.electionDue = g.ticks + n + e.Rand().Uint64N(n*uint64(1+min(g.fruitless, 3)))
}

func (g *Group) member(n wire.NodeID) int { return slices.Index(g.cfg.Members, n) }

// Leader is the leader this member knows of, or NoLeader.
func (g *Group) Leader() wire.NodeID {
	if g.rn == nil {
		return NoLeader
	}
	return nodeOf(g.rn.BasicStatus().Lead)
}

// IsLeader says this member is the leader.
func (g *Group) IsLeader() bool {
	return g.rn != nil && g.rn.BasicStatus().RaftState == raft.StateLeader
}

// Applied is the index of the last entry this member applied.
func (g *Group) Applied() uint64 { return g.applied }

// Timer handles payload if it is the group's timer and reports whether it
// was.
func (g *Group) Timer(e env.Env, payload any) bool {
	defer g.contain(e)
	t, ok := payload.(tick)
	if !ok || t.group != g.cfg.Group {
		return false
	}
	if !g.started {
		return true
	}
	e.SetTimer(g.cfg.TickInterval, tick{g.cfg.Group})
	g.ticks++
	g.rn.Tick() // heartbeats; raft's own election timer never fires
	if g.IsLeader() {
		g.checkQuorum(e)
	} else if g.ticks >= g.electionDue {
		// Campaign starts a pre-vote (Config.PreVote): a member cut off
		// from a majority does not raise the term and disrupt the group
		// when it comes back.
		_ = g.rn.Campaign()
		g.fruitless++
		g.resetElection(e)
	}
	g.handleReady(e)
	return true
}

// checkQuorum makes a leader that has not heard from a majority for an
// election timeout step down, so its clients learn to look elsewhere
// (raft's CheckQuorum, which needs raft's own election timer). Safety
// does not depend on it.
func (g *Group) checkQuorum(e env.Env) {
	n := uint64(g.cfg.ElectionTicks)
	if g.ticks-g.lastCheck < n {
		return
	}
	since := g.ticks - n
	if g.lastCheck > since {
		since = g.lastCheck
	}
	g.lastCheck = g.ticks
	active := 0
	for i, m := range g.cfg.Members {
		if m == e.Self() || g.heard[i] > since {
			active++
		}
	}
	if active > len(g.cfg.Members)/2 {
		return
	}
	g.reads = g.reads[:0]
	if err := g.newRawNode(e); err != nil {
		e.FailStop(err)
	}
}

// Step handles m if it is the group's message and reports whether it was.
// A message that does not decode, or that claims another sender than
// from, is dropped.
func (g *Group) Step(e env.Env, from wire.NodeID, m wire.Msg) bool {
	defer g.contain(e)
	rm, ok := m.(*Msg)
	if !ok || rm.Group != g.cfg.Group {
		return false
	}
	i := g.member(from)
	if !g.started || i < 0 {
		return true
	}
	pm := new(pb.Message)
	if err := proto.Unmarshal(rm.Data, pm); err != nil || pm.GetFrom() != raftID(from) || pm.GetTo() != raftID(e.Self()) {
		return true
	}
	g.heard[i] = g.ticks + 1
	if err := g.rn.Step(pm); err != nil {
		return true // a local message type from the network, or from an unknown peer
	}
	st := g.rn.BasicStatus()
	switch t := pm.GetType(); {
	case (t == pb.MessageType_MsgApp || t == pb.MessageType_MsgHeartbeat || t == pb.MessageType_MsgSnap) && st.Lead == pm.GetFrom():
		g.fruitless = 0
		g.resetElection(e) // heard from the leader
	case t == pb.MessageType_MsgVote && st.GetVote() == pm.GetFrom() && st.GetTerm() == pm.GetTerm():
		g.resetElection(e) // granted a vote
	}
	g.handleReady(e)
	return true
}

// Propose asks the group to apply cmd. A follower forwards it to the
// leader it knows; with no leader known it returns a *NotLeaderError.
// token names the proposal for Applied (0: no notification). Success says
// only that the proposal was handed on: it may still be lost (a message
// dropped, a leader deposed) and then is never applied and never
// notified; the caller times out, the outcome unknown.
func (g *Group) Propose(e env.Env, cmd []byte, token uint64) error {
	defer g.contain(e)
	if !g.started {
		return &NotLeaderError{Group: g.cfg.Group, Hint: NoLeader}
	}
	if g.Leader() == NoLeader {
		return &NotLeaderError{Group: g.cfg.Group, Hint: NoLeader}
	}
	data := make([]byte, 0, len(cmd)+24)
	data = binary.AppendUvarint(data, uint64(e.Self()))
	data = binary.AppendUvarint(data, g.incarnation)
	data = binary.AppendUvarint(data, token)
	data = append(data, cmd...)
	err := g.rn.Propose(data)
	g.handleReady(e)
	if errors.Is(err, raft.ErrProposalDropped) {
		return ErrDropped
	}
	return err
}

// Read asks for a linearizable read point (raft's ReadIndex, in its safe
// mode: the leader confirms with a majority that it still leads). When
// this member has applied everything committed before the call,
// StateMachine.Readable(token) fires. A follower asks its leader; with no
// leader known Read returns a *NotLeaderError. Like a proposal, a read
// may be lost and then never fires.
func (g *Group) Read(e env.Env, token uint64) error {
	defer g.contain(e)
	if !g.started || g.Leader() == NoLeader {
		return &NotLeaderError{Group: g.cfg.Group, Hint: NoLeader}
	}
	ctx := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, g.incarnation), token)
	g.rn.ReadIndex(ctx)
	g.handleReady(e)
	return nil
}

// contain turns a panic of the raft library (it panics when it finds its
// own invariants broken: a log that contradicts a commit index, a term
// that went back) into a broken invariant of this node, which
// fail-stops it instead of the whole process: the node may host other
// groups and keyspaces. Every entry point defers it.
func (g *Group) contain(e env.Env) {
	if p := recover(); p != nil {
		env.Invariant(e, false, "rsm: group %s: %v", g.cfg.Group, p)
	}
}

// handleReady runs raft's Ready loop: persist, send, apply, advance, and
// compact the log when enough entries were applied since the last
// snapshot.
func (g *Group) handleReady(e env.Env) {
	for g.rn.HasReady() {
		rd := g.rn.Ready()
		if rd.SoftState != nil && rd.SoftState.Lead != raft.None && rd.SoftState.RaftState != raft.StateLeader {
			g.resetElection(e) // a new leader: wait a full timeout
		}
		// Persist before send: these writes are synced by the runtime
		// before the messages below leave the node. A snapshot from the
		// leader comes first: raft has replaced its log with it.
		if !raft.IsEmptySnap(rd.Snapshot) {
			if err := g.install(e.Store(), rd.Snapshot); err != nil {
				e.FailStop(fmt.Errorf("rsm: group %s: installing a snapshot: %w", g.cfg.Group, err))
				return
			}
			if !g.restore(e, rd.Snapshot) {
				return
			}
		}
		if err := g.save(e.Store(), rd.HardState, rd.Entries); err != nil {
			e.FailStop(fmt.Errorf("rsm: group %s: saving: %w", g.cfg.Group, err))
			return
		}
		var snapTo []uint64
		for _, m := range rd.Messages {
			b, err := marshal.Marshal(m)
			if err != nil {
				e.FailStop(fmt.Errorf("rsm: group %s: encoding %s: %w", g.cfg.Group, m.GetType(), err))
				return
			}
			e.Send(nodeOf(m.GetTo()), &Msg{Group: g.cfg.Group, Type: m.GetType(), Data: b})
			if m.GetType() == pb.MessageType_MsgSnap {
				snapTo = append(snapTo, m.GetTo())
			}
		}
		for _, rs := range rd.ReadStates {
			if len(rs.RequestCtx) == 16 && binary.BigEndian.Uint64(rs.RequestCtx) == g.incarnation {
				g.reads = append(g.reads, pendingRead{rs.Index, binary.BigEndian.Uint64(rs.RequestCtx[8:])})
			}
		}
		for _, ent := range rd.CommittedEntries {
			if !g.apply(e, ent) {
				return
			}
		}
		g.serveReads(e)
		g.rn.Advance(rd)
		// Raft sends a follower nothing more until it hears how a
		// snapshot went. Sending is all a member knows of it: report it
		// finished, so raft probes the follower after the snapshot's
		// index, and a follower that lost the message rejects the probe
		// and is sent the snapshot again.
		for _, to := range snapTo {
			g.rn.ReportSnapshot(to, raft.SnapshotFinish)
		}
		if g.applied-g.snapIndex >= uint64(g.cfg.SnapshotEntries) {
			if err := g.compact(e); err != nil {
				e.FailStop(fmt.Errorf("rsm: group %s: taking a snapshot: %w", g.cfg.Group, err))
				return
			}
		}
	}
}

// restore makes the state machine snap's and reports whether it could.
func (g *Group) restore(e env.Env, snap *pb.Snapshot) bool {
	i := snap.GetMetadata().GetIndex()
	if !env.Invariant(e, i > g.applied, "rsm: group %s: restoring a snapshot at %d after applying %d", g.cfg.Group, i, g.applied) {
		return false
	}
	if err := g.sm.Restore(e, snap.GetData()); err != nil {
		env.Invariant(e, false, "rsm: group %s: restoring the snapshot at %d: %v", g.cfg.Group, i, err)
		return false
	}
	g.applied, g.snapIndex = i, i
	return true
}

// apply applies one committed entry.
func (g *Group) apply(e env.Env, ent *pb.Entry) bool {
	if !env.Invariant(e, ent.GetIndex() == g.applied+1, "rsm: group %s: applying %d after %d", g.cfg.Group, ent.GetIndex(), g.applied) {
		return false
	}
	g.applied = ent.GetIndex()
	if ent.GetType() != pb.EntryType_EntryNormal || len(ent.GetData()) == 0 {
		return true // a new leader's empty entry; conf changes are never proposed
	}
	data := ent.GetData()
	proposer, n1 := binary.Uvarint(data)
	inc, n2 := binary.Uvarint(data[max(n1, 0):])
	token, n3 := binary.Uvarint(data[max(n1+n2, 0):])
	if !env.Invariant(e, n1 > 0 && n2 > 0 && n3 > 0, "rsm: group %s: entry %d has no header", g.cfg.Group, ent.GetIndex()) {
		return false
	}
	res := g.sm.Apply(e, ent.GetIndex(), data[n1+n2+n3:])
	if wire.NodeID(proposer) == e.Self() && inc == g.incarnation && token != 0 {
		g.sm.Applied(e, token, res)
	}
	return true
}

// serveReads fires Readable for the reads whose index is applied.
func (g *Group) serveReads(e env.Env) {
	k := 0
	for _, r := range g.reads {
		if r.index <= g.applied {
			g.sm.Readable(e, r.token)
			continue
		}
		g.reads[k] = r
		k++
	}
	g.reads = g.reads[:k]
}
