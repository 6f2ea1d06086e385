package dirsc

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/protocol/rsm"
	"github.com/lightcone/lightcone/internal/wire"
)

// directory is one replica of the directory (seed 002 §4.2.6, Alg. 4.2):
// per row its state, owner and copy set, and which frontends hold the
// row's current data. No data passes through it. The directory is a state
// machine of an rsm group (seed 002 A.3: "State machine replication can be
// used"): every change of a row is a command (cmdRequest, cmdFinish)
// applied in log order on every replica, and every decision is a
// deterministic function of the commands applied before (rules D1–D7).
// What needs a clock — waiting for invalidation acks, sharers' leases — is
// driven by the group's current leader, which alone sends to frontends.
type directory struct {
	ks   *Keyspace
	id   wire.NodeID
	g    *rsm.Group
	rows map[string]*dirRow
	// prop proposes commands once the group call under way returns (Apply
	// runs inside the group, which must not be re-entered) and notices
	// this replica becoming the leader (which resumes every Processing
	// row: rule D7).
	prop dirgroup.Proposer
	// regions addresses each region's frontend group: the member last
	// heard from, the next after one went unanswered (rule D8).
	regions dirgroup.Regions
}

// dirRow is one row at a directory replica. Every field but leases is
// the same on every replica that applied the same commands.
type dirRow struct {
	state State
	owner wire.NodeID // M: the owner
	// epoch counts grants; every grant but an owner's re-grant takes a
	// new one, and invalidations carry the current one (rule D2).
	epoch uint64
	// dataEpoch is the epoch whose data is the row's current value as far
	// as confirmed (0: never written); sources hold it.
	dataEpoch uint64
	sources   []wire.NodeID
	sharers   []wire.NodeID // S: the copy set
	// leases: for each sharer, when (on this replica's clock) its lease
	// is over for sure (rule D4). Local: set when this replica applied
	// the grant.
	leases map[wire.NodeID]int64
	// proc is the request being processed: the Processing state of Alg.
	// 4.2, begun and ended by commands (rule D3).
	proc *proc
}

// proc is a Processing row. The first fields are replicated state; the
// rest is the leader's progress in driving it, in this replica's memory.
type proc struct {
	id        uint64      // the log index of the command that began it
	requester wire.NodeID // the region's canonical frontend ID
	replyTo   wire.NodeID // the member that sent the request (rule D8)
	want      State
	nonce     uint64
	to        State
	epoch     uint64
	waiting   []wire.NodeID // whom the invalidation goes to

	driving   bool          // this replica, as leader, drives it
	pending   []wire.NodeID // not yet acknowledged
	acks      map[wire.NodeID]ack
	finishing bool // a cmdFinish was proposed
	timer     env.TimerID
}

// ack is what an invalidation's acknowledgement tells the directory.
type ack struct {
	dataEpoch uint64
	kept      bool
}

type dirTimer struct {
	key string
	id  uint64
}

// Commands of the directory group.
const (
	cmdRequest byte = 1 + iota // key, requester, want, nonce
	cmdFinish                  // key, proc id, acks
)

func newDirectory(ks *Keyspace, id wire.NodeID, group rsm.Config) *directory {
	d := &directory{ks: ks, id: id, rows: make(map[string]*dirRow), regions: dirgroup.NewRegions(ks.Topo)}
	d.g = rsm.New(group, d)
	d.prop.G = d.g
	return d
}

// start restores the group's latest snapshot and replays the log after it
// (rsm): every replica rebuilds its rows from the commands.
func (d *directory) start(e env.Env) {
	d.g.Start(e)
	d.settle(e)
}

// settle runs after every input the group took: it notices a change of
// leadership and proposes what Apply or the leader queued. A command lost
// for want of a leader is made again: the frontend resends its request
// and the leader's timer proposes cmdFinish again.
func (d *directory) settle(e env.Env) { d.prop.Settle(e, d.resume) }

// row returns key's entry, created the first time a command or request
// names it. Preloaded rows are Modified at the loader (seed 002 §5); every
// replica reads the same load record, so every replica starts the row
// alike.
func (d *directory) row(e env.Env, key string) *dirRow {
	if r, ok := d.rows[key]; ok {
		return r
	}
	r := &dirRow{leases: make(map[wire.NodeID]int64)}
	if _, ok := loaded(e, key); ok {
		r.state, r.owner, r.epoch, r.dataEpoch = Modified, d.ks.loader(), loadEpoch, loadEpoch
		r.sources = []wire.NodeID{d.ks.loader()}
	}
	d.rows[key] = r
	return r
}

// resume runs when this replica becomes the leader: every Processing row
// is resumed, its invalidations sent again and its acks collected afresh
// (rule D7).
func (d *directory) resume(e env.Env) {
	for _, key := range slices.Sorted(maps.Keys(d.rows)) {
		if r := d.rows[key]; r.proc != nil {
			d.drive(e, key, r, true)
		}
	}
}

// onRequest takes a frontend's request. A leader answers busy at once for
// a row Processing another request (Alg. 4.2 line 6: busy is only advice,
// safe from any state); everything else is a command. A follower proposes
// it too: rsm forwards it to the leader.
func (d *directory) onRequest(e env.Env, from wire.NodeID, m *Request) {
	d.regions.Heard(from)
	if d.g.IsLeader() {
		if p := d.row(e, m.Key).proc; p != nil && (p.requester != d.ks.Frontend(from) || p.want != m.Want) {
			e.Send(from, &Busy{Key: m.Key, Nonce: m.Nonce})
			return
		}
	}
	b := []byte{cmdRequest}
	b = wire.AppendString(b, m.Key)
	b = wire.AppendVarint(b, int64(from))
	b = wire.AppendUvarint(b, uint64(m.Want))
	b = wire.AppendUvarint(b, m.Nonce)
	d.prop.Queue(b)
	d.settle(e)
}

// Apply implements rsm.StateMachine: one command, in log order, on every
// replica.
func (d *directory) Apply(e env.Env, index uint64, cmd []byte) []byte {
	if len(cmd) == 0 {
		env.Invariant(e, false, "sc: directory command %d is empty", index)
		return nil
	}
	dec := wire.NewDecoder(cmd[1:])
	switch cmd[0] {
	case cmdRequest:
		key, from := dec.String(), wire.NodeID(dec.Varint())
		want, nonce := State(dec.Uvarint()), dec.Uvarint()
		if dec.Err() == nil {
			d.applyRequest(e, index, key, from, want, nonce)
		}
	case cmdFinish:
		key, id := dec.String(), dec.Uvarint()
		n := dec.Uvarint()
		acks := map[wire.NodeID]ack{}
		for i := uint64(0); i < n && dec.Err() == nil; i++ {
			node := wire.NodeID(dec.Varint())
			acks[node] = ack{dataEpoch: dec.Uvarint(), kept: dec.Bool()}
		}
		if dec.Err() == nil {
			if r := d.row(e, key); r.proc != nil && r.proc.id == id {
				d.finish(e, key, r, acks)
			} // else: finished already (by another leader's proposal)
		}
	default:
		env.Invariant(e, false, "sc: directory command %d has unknown kind %d", index, cmd[0])
	}
	if dec.Err() != nil {
		env.Invariant(e, false, "sc: directory command %d undecodable: %v", index, dec.Err())
	}
	return nil
}

// Applied implements rsm.StateMachine: the directory needs no notice (the
// leader acts on what it applies).
func (d *directory) Applied(env.Env, uint64, []byte) {}

// Readable implements rsm.StateMachine: the directory never reads.
func (d *directory) Readable(env.Env, uint64) {}

// Snapshot implements rsm.StateMachine: the replicated fields of every
// row, in key order. Leases and the leader's progress on a Processing row
// are this replica's, not encoded.
func (d *directory) Snapshot(env.Env) []byte {
	return dirgroup.EncodeRows(d.rows, func(b []byte, r *dirRow) []byte {
		b = wire.AppendUvarint(b, uint64(r.state))
		b = wire.AppendVarint(b, int64(r.owner))
		b = wire.AppendUvarint(wire.AppendUvarint(b, r.epoch), r.dataEpoch)
		b = appendNodes(appendNodes(b, r.sources), r.sharers)
		b = wire.AppendBool(b, r.proc != nil)
		if p := r.proc; p != nil {
			b = wire.AppendUvarint(b, p.id)
			b = wire.AppendVarint(wire.AppendVarint(b, int64(p.requester)), int64(p.replyTo))
			b = wire.AppendUvarint(wire.AppendUvarint(b, uint64(p.want)), p.nonce)
			b = wire.AppendUvarint(wire.AppendUvarint(b, uint64(p.to)), p.epoch)
			b = appendNodes(b, p.waiting)
		}
		return b
	})
}

// Restore implements rsm.StateMachine: the rows of a Snapshot. Every
// sharer's lease runs from now, as it would from a replay's application
// of its grant (rule D4); a Processing row waits for a leader to drive it
// (rule D7).
func (d *directory) Restore(e env.Env, data []byte) error {
	leaseEnd := e.Now() + int64(d.ks.cfg.stretchedLease())
	rows, err := dirgroup.DecodeRows(data, func(dec *wire.Decoder) *dirRow {
		r := &dirRow{state: decodeState(dec), owner: wire.NodeID(dec.Varint()), epoch: dec.Uvarint(), dataEpoch: dec.Uvarint(),
			sources: decodeNodes(dec), sharers: decodeNodes(dec), leases: make(map[wire.NodeID]int64)}
		for _, s := range r.sharers {
			r.leases[s] = leaseEnd
		}
		if dec.Bool() {
			r.proc = &proc{id: dec.Uvarint(), requester: wire.NodeID(dec.Varint()), replyTo: wire.NodeID(dec.Varint()),
				want: decodeState(dec), nonce: dec.Uvarint(),
				to: decodeState(dec), epoch: dec.Uvarint(), waiting: decodeNodes(dec)}
		}
		return r
	})
	if err != nil {
		return fmt.Errorf("sc: directory %w", err)
	}
	for _, key := range slices.Sorted(maps.Keys(d.rows)) {
		if p := d.rows[key].proc; p != nil {
			e.CancelTimer(p.timer)
		}
	}
	d.rows = rows
	return nil
}

// applyRequest is Alg. 4.2 with its gaps closed (doc.go, rules D1–D6):
// from is the member of a region's frontend group that sent the request,
// fe the region's canonical ID (rule D8).
func (d *directory) applyRequest(e env.Env, index uint64, key string, from wire.NodeID, want State, nonce uint64) {
	r := d.row(e, key)
	lead := d.g.IsLeader()
	fe := d.ks.Frontend(from)
	if p := r.proc; p != nil {
		if p.requester == fe && p.want == want {
			p.nonce, p.replyTo = nonce, from // a resend: answer the latest
			return
		}
		if lead {
			e.Send(from, &Busy{Key: key, Nonce: nonce}) // Alg. 4.2 line 6
		}
		return
	}
	p := &proc{id: index, requester: fe, replyTo: from, want: want, nonce: nonce, epoch: r.epoch}
	switch {
	case want == Modified && r.state == Modified && r.owner == fe:
		// The owner lost its grant (or this is a stale copy of its
		// request): the same grant again, same epoch (rule D2).
		if lead {
			d.grant(e, from, &Grant{Key: key, Want: Modified, Nonce: nonce, Epoch: r.epoch,
				DataEpoch: r.dataEpoch, Sources: without(r.sources, fe)})
		}
		return
	case want == Modified && r.state == Shared:
		// The requester is left out of its own invalidation set (rule D6).
		p.to, p.waiting = Invalid, without(r.sharers, fe)
	case want == Modified && r.state == Modified:
		p.to, p.waiting = Invalid, []wire.NodeID{r.owner}
	case want == Shared && r.state == Modified:
		// Downgrade the owner, even when it is the requester: it may
		// have taken the grant after all (rule D6).
		p.to, p.waiting = Shared, []wire.NodeID{r.owner}
	}
	r.proc = p
	if len(p.waiting) == 0 {
		// Shared or Modified requested of an Invalid row, or Shared of
		// a Shared one, needs no invalidation (rule D1).
		d.finish(e, key, r, nil)
		return
	}
	if lead {
		d.drive(e, key, r, true)
	}
}

// drive has the leader work on a Processing row: (re)send the pending
// invalidations, drop sharers whose lease is over, and propose cmdFinish
// when nothing is left to wait for. fresh starts over: every invalidation
// pending, no ack known.
func (d *directory) drive(e env.Env, key string, r *dirRow, fresh bool) {
	p := r.proc
	if fresh {
		e.CancelTimer(p.timer)
		p.driving, p.finishing = true, false
		p.pending, p.acks = slices.Clone(p.waiting), make(map[wire.NodeID]ack)
	}
	now := e.Now()
	next := int64(d.ks.cfg.ResendInterval)
	p.pending = slices.DeleteFunc(p.pending, func(n wire.NodeID) bool {
		end, leased := r.leases[n]
		if r.state == Shared && leased && now >= end {
			return true // its lease is over: no need to hear from it
		}
		if r.state == Shared && leased {
			next = min(next, end-now)
		}
		if !fresh {
			d.regions.Next(n) // unanswered: try the region's next member
		}
		e.Send(d.regions.Target(n), &Inval{Key: key, To: p.to, Epoch: p.epoch})
		return false
	})
	if len(p.pending) == 0 || d.ks.cfg.noInvalidationWait {
		d.proposeFinish(e, key, r)
		return
	}
	e.CancelTimer(p.timer)
	p.timer = e.SetTimer(max(time.Duration(next), 1), dirTimer{key, p.id})
}

// proposeFinish proposes the end of Processing with the acks collected;
// the timer proposes it again should the proposal be lost.
func (d *directory) proposeFinish(e env.Env, key string, r *dirRow) {
	p := r.proc
	p.finishing = true
	b := []byte{cmdFinish}
	b = wire.AppendString(b, key)
	b = wire.AppendUvarint(b, p.id)
	b = wire.AppendUvarint(b, uint64(len(p.acks)))
	for _, n := range slices.Sorted(maps.Keys(p.acks)) {
		a := p.acks[n]
		b = wire.AppendVarint(b, int64(n))
		b = wire.AppendUvarint(b, a.dataEpoch)
		b = wire.AppendBool(b, a.kept)
	}
	e.CancelTimer(p.timer)
	p.timer = e.SetTimer(d.ks.cfg.ResendInterval, dirTimer{key, p.id})
	d.prop.Queue(b)
}

func (d *directory) onTimer(e env.Env, t dirTimer) {
	r := d.rows[t.key]
	if r == nil || r.proc == nil || r.proc.id != t.id || !r.proc.driving {
		return
	}
	if !d.g.IsLeader() {
		r.proc.driving = false // a new leader drives it (rule D7)
		return
	}
	if r.proc.finishing {
		d.proposeFinish(e, t.key, r)
	} else {
		d.drive(e, t.key, r, false)
	}
	d.settle(e)
}

func (d *directory) onAck(e env.Env, from wire.NodeID, m *InvalAck) {
	d.regions.Heard(from)
	from = d.ks.Frontend(from)
	r := d.rows[m.Key]
	if r == nil || r.proc == nil {
		return
	}
	p := r.proc
	if !p.driving || p.finishing || m.Epoch != p.epoch || !slices.Contains(p.pending, from) {
		return
	}
	p.acks[from] = ack{dataEpoch: m.DataEpoch, kept: m.Kept}
	p.pending = without(p.pending, from)
	if len(p.pending) == 0 {
		d.proposeFinish(e, m.Key, r)
		d.settle(e)
	}
}

// finish ends Processing (cmdFinish applied, or a request that needs no
// invalidation): it works out who holds the current data (rule D5) and
// takes the new state under a new epoch; the leader grants.
func (d *directory) finish(e env.Env, key string, r *dirRow, acks map[wire.NodeID]ack) {
	p := r.proc
	r.proc = nil
	e.CancelTimer(p.timer)
	dataEpoch, sources := r.dataEpoch, slices.Clone(r.sources)
	keep := func(n wire.NodeID) {
		if !slices.Contains(sources, n) {
			sources = append(sources, n)
		}
	}
	owner, ownerAcked := acks[r.owner]
	if r.state == Modified {
		switch {
		case ownerAcked && owner.dataEpoch == r.epoch,
			!ownerAcked && d.ks.cfg.noInvalidationWait:
			// The owner took its grant: its copy is the current data.
			dataEpoch, sources = r.epoch, []wire.NodeID{r.owner}
		case ownerAcked && owner.dataEpoch == dataEpoch:
			keep(r.owner)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(acks)) {
		if acks[n].dataEpoch == dataEpoch {
			keep(n)
		}
	}
	prev, prevOwner := r.state, r.owner
	r.epoch++
	r.dataEpoch, r.sources = dataEpoch, sources
	// Leases run from now, when this replica applies the grant: after
	// the requester sent its request and after the downgraded owner
	// acknowledged, whichever replica drove them (rule D4).
	leaseEnd := e.Now() + int64(d.ks.cfg.stretchedLease())
	switch p.want {
	case Modified:
		r.state, r.owner, r.sharers = Modified, p.requester, nil
		clear(r.leases)
	case Shared:
		if prev != Shared {
			r.sharers = nil
			clear(r.leases)
		}
		if prev == Modified && prevOwner != p.requester && ownerAcked && owner.kept && owner.dataEpoch == dataEpoch {
			// The downgraded owner keeps reading under a lease from its
			// ack (rule D4).
			r.sharers = append(r.sharers, prevOwner)
			r.leases[prevOwner] = leaseEnd
		}
		if !slices.Contains(r.sharers, p.requester) {
			r.sharers = append(r.sharers, p.requester)
		}
		r.leases[p.requester] = leaseEnd
		r.state, r.owner = Shared, 0
	}
	if !d.g.IsLeader() {
		return
	}
	src := without(sources, p.requester)
	for _, n := range r.sharers {
		if n != p.requester && !slices.Contains(src, n) {
			src = append(src, n) // unconfirmed: the requester checks
		}
	}
	d.grant(e, p.replyTo, &Grant{Key: key, Want: p.want, Nonce: p.nonce, Epoch: r.epoch, DataEpoch: dataEpoch, Sources: src})
}

func (d *directory) grant(e env.Env, to wire.NodeID, g *Grant) {
	if d.ks.cfg.probe != nil {
		d.ks.cfg.probe(e, g)
	}
	e.Send(to, g)
}

func without(ns []wire.NodeID, n wire.NodeID) []wire.NodeID {
	return slices.DeleteFunc(slices.Clone(ns), func(x wire.NodeID) bool { return x == n })
}
