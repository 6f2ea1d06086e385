package dirrc

import (
	"fmt"
	"maps"
	"slices"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/protocol/rsm"
	"github.com/lightcone/lightcone/internal/wire"
)

// dirTick is a directory replica's periodic timer: the leader forces the
// release of heads whose holder stopped heartbeating (rules 7, R3). dir is
// the replica's directory group (a node may be a replica of several).
type dirTick struct{ dir int }

// entry is one frontend in a row's FIFO queue: FE is the region's
// canonical frontend ID (rule D8).
type entry struct {
	FE    wire.NodeID
	Nonce uint64
}

// dirRow is one row at a directory replica. Every field but deadline is
// the same on every replica that applied the same commands.
type dirRow struct {
	epoch     uint64   // of the newest grant
	confirmed bool     // the head reported its copy current as of epoch
	queue     []entry  // FIFO: queue[0] holds the row
	chain     []source // where the head syncs from, newest first
	// deadline is the head's forced release on this replica's clock:
	// only the leader's is used (memory only, rules 7, R4).
	deadline int64
	// forcing is the epoch this replica, as leader, proposed to force
	// out: it renews that head no more (rule R3).
	forcing uint64
	forceAt int64 // when forcing was last proposed
	// confirming is the epoch a cmdConfirm was proposed for, and when.
	confirming   uint64
	confirmingAt int64
}

// maxChain bounds a row's sync chain. The chain only grows past one entry
// while heads leave without reporting their copy current (they crashed or
// lapsed mid-sync); the oldest entries go first.
const maxChain = 32

// Commands of the directory group (rule R1).
const (
	cmdAcquire byte = 1 + iota // key, frontend, nonce: fe_acquire
	cmdRelease                 // key, frontend, nonce, epoch, current: fe_release
	cmdConfirm                 // key, frontend, nonce, epoch: a heartbeat reported the copy current
	cmdForce                   // key, epoch: the leader's forced release (rule 7)
	cmdBarrier                 // "", replica, nonce: a new leader's first command (rule R4)
)

// directory is one replica of the central directory (thesis §4.3.1: a
// FIFO queue per row), a state machine of an rsm group (seed 002 A.3):
// fe_acquire, fe_release, a heartbeat's report that a copy is current and
// a forced release are commands applied in log order on every replica
// (rule R1); the leader sends the grants as it applies them (R2), runs
// the heartbeat deadlines and proposes forced releases (R3), and a new
// leader resumes every row (R4).
type directory struct {
	ks   *Keyspace
	id   wire.NodeID
	idx  int // the directory group's index in the keyspace's layout
	g    *rsm.Group
	prop dirgroup.Proposer
	rows map[string]*dirRow
	// leaseFloor: no head's deadline ends before it (this replica's
	// clock): a new leader's grace for the heartbeats its predecessor
	// may still answer (rule R4).
	leaseFloor int64
	forced     uint64 // forced releases applied as leader (counter)
	// barrier is the nonce of this leader's cmdBarrier; ready, that it
	// was applied: every command of earlier leaders (a forced release
	// among them) is applied, and heartbeats may be answered (rule R4).
	barrier uint64
	ready   bool
	// regions addresses each region's frontend group: grants go to the
	// member last heard from (rule D8).
	regions dirgroup.Regions
}

func newDirectory(ks *Keyspace, id wire.NodeID, idx int) *directory {
	d := &directory{ks: ks, id: id, idx: idx, rows: map[string]*dirRow{}, regions: dirgroup.NewRegions(ks.Topo)}
	d.g = rsm.New(ks.Layout.Dirs[idx].Group, d)
	d.prop.G = d.g
	return d
}

// start restores the group's latest snapshot and replays the log after it
// (rsm): every replica rebuilds its rows from the commands.
func (d *directory) start(e env.Env) {
	e.SetTimer(d.ks.cfg.HeartbeatInterval, dirTick{d.idx})
	d.g.Start(e)
	d.settle(e)
}

// settle runs after every input the group took (dirgroup.Proposer).
func (d *directory) settle(e env.Env) { d.prop.Settle(e, d.resume) }

func (d *directory) row(key string) *dirRow {
	r := d.rows[key]
	if r == nil {
		r = &dirRow{}
		d.rows[key] = r
	}
	return r
}

// resume runs when this replica becomes the leader (rule R4): every head
// gets hold_lease plus the grace of a deposed leader's step-down before it
// can be forced out, and its grant is sent again (a lost or never-sent
// grant; the frontend ignores one it already took).
func (d *directory) resume(e env.Env) {
	d.proposeBarrier(e)
	d.leaseFloor = e.Now() + int64(d.ks.cfg.HoldLease+d.ks.resumeGrace())
	for _, key := range slices.Sorted(maps.Keys(d.rows)) {
		r := d.rows[key]
		if len(r.queue) == 0 {
			continue
		}
		r.deadline = max(r.deadline, d.leaseFloor)
		d.sendGrant(e, key, r, 0, d.regions.Target(r.queue[0].FE))
	}
}

// proposeBarrier queues a new leader's first command: heartbeats wait for
// it to be applied (rule R4).
func (d *directory) proposeBarrier(e env.Env) {
	d.ready, d.barrier = false, e.Rand().Uint64()|1
	b := wire.AppendString([]byte{cmdBarrier}, "")
	d.prop.Queue(wire.AppendUvarint(wire.AppendVarint(b, int64(d.id)), d.barrier))
}

func (d *directory) propose(e env.Env, cmd []byte) {
	d.prop.Queue(cmd)
	d.settle(e)
}

// onAcquire: fe_acquire becomes a command; a follower's proposal goes to
// the leader. A resent fe_acquire the leader has queued already is
// answered at once (the head's grant was lost) or dropped (it waits).
func (d *directory) onAcquire(e env.Env, from wire.NodeID, m *FeAcquire) {
	d.regions.Heard(from)
	if r := d.rows[m.Key]; r != nil && d.g.IsLeader() {
		switch i := slices.Index(r.queue, entry{d.ks.Frontend(from), m.Nonce}); {
		case i == 0:
			// The head asks again: its grant was lost or came too late
			// to serve. A leader that knows every earlier leader's
			// forced releases (ready) and is not forcing this head out
			// renews it and echoes this fe_acquire, so the head's lease
			// counts from it (rules 6, 7, R3).
			sent := int64(0)
			if d.ready && r.forcing != r.epoch {
				r.deadline = max(r.deadline, e.Now()+int64(d.ks.cfg.HoldLease))
				sent = m.Sent
			}
			d.sendGrant(e, m.Key, r, sent, from)
			return
		case i > 0:
			return // queued already: no log entry for a waiting frontend's resend
		}
	}
	b := wire.AppendString([]byte{cmdAcquire}, m.Key)
	b = wire.AppendUvarint(wire.AppendVarint(b, int64(from)), m.Nonce)
	d.propose(e, wire.AppendVarint(b, m.Sent))
}

// onRelease: fe_release becomes a command (stale ones are ignored when
// applied: only then is the replica's state current).
func (d *directory) onRelease(e env.Env, from wire.NodeID, m *FeRelease) {
	b := wire.AppendString([]byte{cmdRelease}, m.Key)
	b = wire.AppendUvarint(wire.AppendVarint(b, int64(from)), m.Nonce)
	b = wire.AppendBool(wire.AppendUvarint(b, m.Epoch), m.Current)
	d.propose(e, b)
}

// Apply implements rsm.StateMachine: one command, in log order, on every
// replica.
func (d *directory) Apply(e env.Env, index uint64, cmd []byte) []byte {
	if len(cmd) == 0 {
		env.Invariant(e, false, "rc: directory command %d is empty", index)
		return nil
	}
	dec := wire.NewDecoder(cmd[1:])
	key := dec.String()
	switch cmd[0] {
	case cmdAcquire:
		from, nonce, sent := wire.NodeID(dec.Varint()), dec.Uvarint(), dec.Varint()
		if dec.Err() == nil {
			d.regions.Heard(from)
			d.applyAcquire(e, key, d.ks.Frontend(from), nonce, sent)
		}
	case cmdRelease:
		from, nonce, epoch, current := wire.NodeID(dec.Varint()), dec.Uvarint(), dec.Uvarint(), dec.Bool()
		r := d.row(key)
		if dec.Err() != nil || len(r.queue) == 0 || r.queue[0] != (entry{d.ks.Frontend(from), nonce}) || epoch != r.epoch {
			// Stale or duplicate. The epoch matters: a duplicated
			// fe_acquire can queue a nonce again after its release, and
			// that grant's epoch was never served (seed 628 of TestSwarm).
			break
		}
		r.confirmed = r.confirmed || current
		d.dequeueHead(r)
		d.grantNext(e, key, r)
	case cmdConfirm:
		from, nonce, epoch := wire.NodeID(dec.Varint()), dec.Uvarint(), dec.Uvarint()
		if r := d.row(key); dec.Err() == nil && len(r.queue) > 0 && r.queue[0] == (entry{d.ks.Frontend(from), nonce}) && epoch == r.epoch {
			r.confirmed = true
		}
	case cmdForce:
		epoch := dec.Uvarint()
		r := d.row(key)
		if dec.Err() != nil || len(r.queue) == 0 || epoch != r.epoch {
			break // proposed twice, or the head left first
		}
		if d.g.IsLeader() {
			d.forced++
			d.event(e, "forced_release")
			e.Log().Debug("rc: forced release", "key", key, "holder", r.queue[0].FE, "epoch", r.epoch)
		}
		d.dequeueHead(r)
		d.grantNext(e, key, r)
	case cmdBarrier:
		from, nonce := wire.NodeID(dec.Varint()), dec.Uvarint()
		if dec.Err() == nil && from == d.id && nonce == d.barrier {
			d.ready = true
		}
	default:
		env.Invariant(e, false, "rc: directory command %d has unknown kind %d", index, cmd[0])
	}
	if dec.Err() != nil {
		env.Invariant(e, false, "rc: directory command %d undecodable: %v", index, dec.Err())
	}
	return nil
}

// Applied implements rsm.StateMachine: the directory needs no notice (the
// leader acts on what it applies).
func (d *directory) Applied(env.Env, uint64, []byte) {}

// Readable implements rsm.StateMachine: the directory never reads.
func (d *directory) Readable(env.Env, uint64) {}

// Snapshot implements rsm.StateMachine: the replicated fields of every
// row, in key order. Deadlines and the leader's proposals in flight are
// this replica's, not encoded.
func (d *directory) Snapshot(env.Env) []byte {
	return dirgroup.EncodeRows(d.rows, func(b []byte, r *dirRow) []byte {
		b = wire.AppendBool(wire.AppendUvarint(b, r.epoch), r.confirmed)
		b = wire.AppendUvarint(b, uint64(len(r.queue)))
		for _, q := range r.queue {
			b = wire.AppendUvarint(wire.AppendVarint(b, int64(q.FE)), q.Nonce)
		}
		return appendSources(b, r.chain)
	})
}

// Restore implements rsm.StateMachine: the rows of a Snapshot. Every head
// gets a full hold_lease from now (and no less than the lease floor), as
// a replay's application of its grant would give it (rules 7, R3).
func (d *directory) Restore(e env.Env, data []byte) error {
	deadline := max(e.Now()+int64(d.ks.cfg.HoldLease), d.leaseFloor)
	rows, err := dirgroup.DecodeRows(data, func(dec *wire.Decoder) *dirRow {
		r := &dirRow{epoch: dec.Uvarint(), confirmed: dec.Bool(), deadline: deadline}
		for j, q := 0, listLen(dec); j < q && dec.Err() == nil; j++ {
			r.queue = append(r.queue, entry{FE: wire.NodeID(dec.Varint()), Nonce: dec.Uvarint()})
		}
		r.chain = decodeSources(dec)
		return r
	})
	if err != nil {
		return fmt.Errorf("rc: directory %w", err)
	}
	d.rows = rows
	return nil
}

// applyAcquire enqueues the frontend (rule 3). A frontend already queued
// under another nonce has given up that place (it released, lapsed or
// restarted): if it was the head this is its release, and it goes to the
// back of the queue.
func (d *directory) applyAcquire(e env.Env, key string, from wire.NodeID, nonce uint64, sent int64) {
	r := d.row(key)
	i := slices.IndexFunc(r.queue, func(q entry) bool { return q.FE == from })
	switch {
	case i < 0:
		r.queue = append(r.queue, entry{from, nonce})
		if len(r.queue) == 1 {
			d.grantHead(e, key, r, sent)
		}
	case staleNonce(nonce, r.queue[i].Nonce):
		// An older attempt of the same incarnation, reordered or
		// forwarded late: the frontend gave it up for the queued one.
	case r.queue[i].Nonce == nonce:
		if i == 0 && d.g.IsLeader() { // the grant was lost: send it again
			d.sendGrant(e, key, r, 0, d.regions.Target(from))
		}
	case i == 0:
		d.dequeueHead(r)
		r.queue = append(r.queue, entry{from, nonce})
		d.grantHead(e, key, r, sent)
	default:
		r.queue[i].Nonce = nonce
	}
}

// staleNonce says fe_acquire nonce n is older than queued nonce q of the
// same region: nonces count up across the region's frontend leaders (the
// leader's term in the high 32 bits, rule F3).
func staleNonce(n, q uint64) bool { return n < q }

// dequeueHead removes the head and records it as the newest sync source:
// alone if it reported its copy current, else ahead of the older sources
// (it may have written nothing, rule 5).
func (d *directory) dequeueHead(r *dirRow) {
	h := source{FE: r.queue[0].FE, Epoch: r.epoch}
	if r.confirmed {
		r.chain = []source{h}
	} else {
		r.chain = append([]source{h}, r.chain...)
		if len(r.chain) > maxChain {
			r.chain = r.chain[:maxChain]
		}
	}
	r.queue = slices.Delete(r.queue, 0, 1)
	r.confirmed = false
}

func (d *directory) grantNext(e env.Env, key string, r *dirRow) {
	if len(r.queue) > 0 {
		d.grantHead(e, key, r, 0)
	}
}

// grantHead grants the row to the head of the queue at a new epoch, naming
// the sync chain (rule 4). Every replica takes the new epoch; the leader
// sends the grant (rule R2): the command is in a majority's durable logs,
// so persist before send holds. sent is the Sent of the fe_acquire command
// that queued the head into an empty queue (0: another's release): it is
// in the log, so every leader that applies the command echoes the same
// value, and a forced release of this epoch follows a deadline set after
// it was received.
func (d *directory) grantHead(e env.Env, key string, r *dirRow, sent int64) {
	r.epoch++
	r.confirmed = false
	r.deadline = max(e.Now()+int64(d.ks.cfg.HoldLease), d.leaseFloor)
	if d.g.IsLeader() {
		d.sendGrant(e, key, r, sent, d.regions.Target(r.queue[0].FE))
	}
}

// sendGrant sends the head its grant, echoing sent (Grant.Sent), to
// member to of the head's region.
func (d *directory) sendGrant(e env.Env, key string, r *dirRow, sent int64, to wire.NodeID) {
	h := r.queue[0]
	d.event(e, "grant")
	e.Send(to, &Grant{Key: key, Nonce: h.Nonce, Epoch: r.epoch, Chain: slices.Clone(r.chain), Sent: sent})
}

func (d *directory) event(e env.Env, what string) {
	if d.ks.cfg.probe != nil {
		d.ks.cfg.probe(e, what)
	}
}

// onHeartbeat: the leader renews the heads among a frontend's holds (rule
// 7; memory only, rule R3) and tells it which rows others wait for; a
// copy reported current becomes a command. A follower does not answer: it
// cannot renew the leader's deadlines (the frontend moves on, rule R5).
func (d *directory) onHeartbeat(e env.Env, from wire.NodeID, m *Heartbeat) {
	if !d.g.IsLeader() || !d.ready {
		return
	}
	d.regions.Heard(from)
	ack := &HeartbeatAck{Seq: m.Seq}
	for _, h := range m.Holds {
		r := d.rows[h.Key]
		if r == nil || len(r.queue) == 0 || r.queue[0] != (entry{d.ks.Frontend(from), h.Nonce}) || h.Epoch != r.epoch || r.forcing == r.epoch {
			continue
		}
		r.deadline = max(r.deadline, e.Now()+int64(d.ks.cfg.HoldLease))
		if h.Current && !r.confirmed && (r.confirming != r.epoch || e.Now()-r.confirmingAt >= int64(d.ks.cfg.ResendInterval)) {
			r.confirming, r.confirmingAt = r.epoch, e.Now()
			b := wire.AppendString([]byte{cmdConfirm}, h.Key)
			b = wire.AppendUvarint(wire.AppendVarint(b, int64(from)), h.Nonce)
			d.prop.Queue(wire.AppendUvarint(b, h.Epoch))
		}
		ack.Holds = append(ack.Holds, hold{Key: h.Key, Nonce: h.Nonce, Current: h.Current, Wanted: len(r.queue) > 1})
	}
	e.Send(from, ack)
	d.settle(e)
}

// tick: the leader proposes the forced release of every head that has not
// heartbeated for hold_lease (rule 7: the thesis's proposed heartbeat and
// timeout; rule R3). A lost proposal is made again at the next tick.
func (d *directory) tick(e env.Env) {
	e.SetTimer(d.ks.cfg.HeartbeatInterval, dirTick{d.idx})
	if !d.g.IsLeader() {
		return
	}
	if !d.ready {
		d.proposeBarrier(e) // the last one may have been lost
	}
	now := e.Now()
	for _, k := range slices.Sorted(maps.Keys(d.rows)) {
		if r := d.rows[k]; len(r.queue) > 0 && r.deadline <= now {
			if r.forcing == r.epoch && now-r.forceAt < int64(d.ks.cfg.ResendInterval) {
				continue // proposed already; again should it be lost
			}
			r.forcing, r.forceAt = r.epoch, now
			d.prop.Queue(wire.AppendUvarint(wire.AppendString([]byte{cmdForce}, k), r.epoch))
		}
	}
	d.settle(e)
}
