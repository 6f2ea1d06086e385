package meteor

import (
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/wire"
)

// sentPayload is a payload as the dispatcher keeps it for redundancy, as
// each peer gets it: toPeer[q] holds only the entries of keys q replicates
// (Fig. 4.13a: statusMessage[key] goes to replicaList[key]). It is made
// once, when the payload is first sent, and repeated in the next
// Redundant statuses.
type sentPayload struct {
	seq    uint64
	msgTs  int64
	toPeer []Payload
}

// splitPending puts each entry applied since the last status in the
// payload of every peer that replicates its key (toPeer, by node), in the
// order they were applied. Entries are counted by peer first and each
// peer's carved from one array, in one pass over the entries rather than
// one per node.
func (r *Replica) splitPending(toPeer []Payload) {
	if len(r.pending) == 0 {
		return
	}
	var repsBuf [16][]wire.NodeID // each entry's replicas
	reps := repsBuf[:0]
	counts := r.counts // by node, all zero
	total := 0
	for _, en := range r.pending {
		rs := r.key(en.Key).replicas
		reps = append(reps, rs)
		for _, q := range rs {
			if q != r.id {
				counts[q]++
				total++
			}
		}
	}
	all := make([]Entry, total)
	for q, c := range counts {
		if c > 0 {
			toPeer[q].Entries, all = all[:0:c], all[c:]
			counts[q] = 0
		}
	}
	for i, en := range r.pending {
		for _, q := range reps[i] {
			if q != r.id {
				toPeer[q].Entries = append(toPeer[q].Entries, en)
			}
		}
	}
}

// dispatch is the status message dispatcher (Fig. 4.13a, §4.2.4): every
// interval, a status with the versions applied since the last one goes to
// every peer, even when there were none, stamped with this node's closure
// (its clock, or a later closure it promised): the status says the sender
// holds no version stamped at or before MsgTs beyond those it has reported,
// and it keeps that promise by refusing later writes stamped that early
// (applyWrite). The closure's bound is stored before the status leaves.
func (r *Replica) dispatch(e env.Env) {
	r.seq++
	// The closure it promises runs ClosureLead ahead of the clock, so a
	// read needing a closure up to then is answered from this status
	// rather than from the next one (Config.ClosureLead).
	p := sentPayload{seq: r.seq, msgTs: r.promise(e, e.Now()+int64(r.ks.cfg.closureLead()))}
	// A status promises its closure: it never goes back, and a restart
	// keeps it, being at most the stored bound (doc.go, "Closure").
	last := int64(0)
	if len(r.history) > 0 {
		last = r.history[len(r.history)-1].msgTs
	}
	env.Invariant(e, last <= p.msgTs && p.msgTs <= r.durable, "meteor: status %d promises closure %d after %d (stored bound %d)", p.seq, p.msgTs, last, r.durable)
	nodes := len(r.ks.topo.Nodes)
	p.toPeer = make([]Payload, nodes)
	for q := range p.toPeer {
		p.toPeer[q] = Payload{Seq: p.seq, MsgTs: p.msgTs}
	}
	r.splitPending(p.toPeer)
	r.pending = r.pending[:0]
	r.history = append(r.history, p)
	if len(r.history) > r.ks.cfg.Redundant+1 {
		r.history = slices.Delete(r.history, 0, len(r.history)-r.ks.cfg.Redundant-1)
	}
	// The statuses, and the lists of payloads they repeat, are carved from
	// one array each rather than allocated one by one: a status to every
	// peer every interval made this a large part of a run's allocations.
	// Nothing keeps a status after handling it (onStatus copies payloads).
	msgs := make([]Status, nodes)
	reps := len(r.history) - 1
	var redundant []Payload
	if reps > 0 {
		redundant = make([]Payload, 0, nodes*reps)
	}
	for q := range msgs {
		peer := wire.NodeID(q)
		if peer == r.id {
			continue
		}
		m := &msgs[q]
		*m = Status{Epoch: r.epoch, Genesis: r.genesis, Now: r.history[reps].toPeer[peer]}
		if reps > 0 {
			start := len(redundant)
			for i := reps - 1; i >= 0; i-- {
				redundant = append(redundant, r.history[i].toPeer[peer])
			}
			m.Redundant = redundant[start:len(redundant):len(redundant)]
		}
		e.Send(peer, m)
	}
	r.recheck(e) // also expires parked reads
}

// durableAhead is how far ahead of the closure its stored bound is set, so
// the bound is written about once per durableAhead rather than with every
// status.
const durableAhead = 250 * time.Millisecond

// peerView is the status map's record of one peer (Fig. 4.13b): up to
// which status its report is complete. The versions it has reported
// applying are in Replica.reports.
type peerView struct {
	epoch uint64
	known bool // a status of this epoch has arrived
	// complete: every payload of this epoch since Seq 1 has been applied and
	// the epoch began empty (Genesis), so its reports are the peer's whole
	// state as of lastTs. Otherwise only keys in probed are known exactly.
	complete   bool
	contiguous uint64 // every payload up to this Seq has been applied
	lastTs     int64  // MsgTs of payload contiguous: the peer's closure
	heardAt    int64  // local time the last status arrived
	// floor: a pull answered at a Seq below it does not tell the peer's
	// state (payloads after that Seq may be missing).
	floor  uint64
	buf    map[uint64]Payload // payloads after a gap, waiting for it to fill
	probed map[string]probe   // keys whose state a pull told
}

// keyReports is the status map's row of one key: for each of its replicas
// (Keyspace.Replicas), the versions it has reported applying, oldest first
// (nil for this replica). One row per key, rather than a map per peer,
// spares a lookup by key string per peer wherever a read or compaction
// looks at a key's reports.
type keyReports struct {
	reps []wire.NodeID // keyInfo.replicas
	vers [][]wire.Version
	// dropped: the row has left Replica.reports (compact), so a keyInfo
	// holding it must look the key up again.
	dropped bool
	inline  [4][]wire.Version // vers, when it fits (as keyInfo.reps)
}

// peer is the status map's record of node p: nil before its first
// status, or if p is no node of the topology.
func (r *Replica) peer(p wire.NodeID) *peerView {
	if p < 0 || int(p) >= len(r.peers) {
		return nil
	}
	return r.peers[p]
}

// probe is what a pull told of a peer's key: the Seq of the last status it
// had sent, and its compaction watermark, at or below which the versions it
// listed are not the whole story.
type probe struct {
	seq   uint64
	mark  int64
	floor wire.Version // the peer's compaction floor for the key
}

// addPeerVersion records that peer p, a replica of key, applied v of it.
// Only replicas report a key (a status entry comes from the replica that
// applied the write, a pull's answer from the replica asked): a report
// from another node would be of no use, and is not kept.
func (r *Replica) addPeerVersion(p wire.NodeID, key string, v wire.Version) {
	kr := r.reports[key]
	if kr == nil {
		reps := r.key(key).replicas
		if !slices.Contains(reps, p) {
			return
		}
		kr = &keyReports{reps: reps}
		if n := len(reps); n <= len(kr.inline) {
			kr.vers = kr.inline[:n:n]
		} else {
			kr.vers = make([][]wire.Version, n)
		}
		r.reports[key] = kr
	}
	i := slices.Index(kr.reps, p)
	if i < 0 {
		return
	}
	vs, added := insertVersion(kr.vers[i], v)
	if added {
		kr.vers[i] = vs
		if len(vs) > 1 {
			r.dirty[key] = struct{}{}
		}
	}
}

func (r *Replica) applyPayload(from wire.NodeID, p Payload) {
	for _, en := range p.Entries {
		r.addPeerVersion(from, en.Key, en.Version)
	}
}

// reset forgets which keys the view knows exactly (after a gap that
// redundancy cannot fill, or a new epoch). Reported versions stay: a
// replica's applied versions are durable, so they remain true.
func (pv *peerView) reset(floor uint64) {
	pv.complete = false
	pv.floor = floor
	clear(pv.probed)
	clear(pv.buf)
}

// closedAt reports whether the view knows the peer's whole set of versions
// of key stamped at or before t: its report is complete for key up to a
// status whose closure is t or later.
func (pv *peerView) closedAt(key string, t int64) bool {
	if pv == nil || !pv.known || pv.lastTs < t {
		return false
	}
	if pv.complete {
		return true
	}
	pr, ok := pv.probed[key]
	return ok && pv.contiguous >= pr.seq && t > pr.mark
}

// knowsAbsent reports whether the view knows the peer never applied v of
// key, whose reported versions are vs (keyReports): its report is complete
// for key past v's timestamp and does not list v. A pulled list is exact
// above the peer's watermark, and for versions newer than the peer's
// compaction floor (it drops only versions older than a committed base, or
// known never to commit).
func (pv *peerView) knowsAbsent(key string, vs []wire.Version, v wire.Version) bool {
	t := v.TS.WallNanos
	if pv == nil || !pv.known || pv.lastTs < t || hasVersion(vs, v) {
		return false
	}
	if pv.complete {
		return true
	}
	pr, ok := pv.probed[key]
	return ok && pv.contiguous >= pr.seq && (t > pr.mark || pr.floor.Less(v))
}

// repeatsOnly reports whether every payload in ps is at or below seq.
func repeatsOnly(ps []Payload, seq uint64) bool {
	for _, p := range ps {
		if p.Seq > seq {
			return false
		}
	}
	return true
}

// applyNext applies payload p, the one after pv.contiguous, to the view.
func (r *Replica) applyNext(e env.Env, from wire.NodeID, pv *peerView, p Payload) {
	// A peer's closure never goes back within an incarnation: the view's
	// exactness up to lastTs (closedAt, knowsAbsent) rests on it. (Checked
	// first: Invariant's arguments would be boxed every time.)
	if p.MsgTs < pv.lastTs {
		env.Invariant(e, false, "meteor: n%d's status %d closes at %d, before its status %d's %d", from, p.Seq, p.MsgTs, pv.contiguous, pv.lastTs)
	}
	r.applyPayload(from, p)
	pv.contiguous, pv.lastTs = p.Seq, p.MsgTs
}

// onStatus is updateStatus (Fig. 4.13b): add the status to the status map,
// then wake the parked reads.
func (r *Replica) onStatus(e env.Env, from wire.NodeID, m *Status) {
	if from < 0 || int(from) >= len(r.peers) {
		return // not a node of the topology
	}
	pv := r.peers[from]
	if pv == nil {
		pv = &peerView{buf: map[uint64]Payload{}, probed: map[string]probe{}}
		r.peers[from] = pv
	}
	pv.heardAt = e.Now()
	if pv.known && m.Epoch != pv.epoch {
		pv.known = false // the peer restarted
	}
	if pv.known && m.Now.Seq == pv.contiguous+1 && len(pv.buf) == 0 && repeatsOnly(m.Redundant, pv.contiguous) {
		// The next status, nothing waiting (nearly every status): what
		// the general path below does, without gathering the payloads
		// (the repeated ones are all at or below contiguous) or passing
		// this one through buf.
		r.applyNext(e, from, pv, m.Now)
		r.recheck(e)
		return
	}
	all := append([]Payload{m.Now}, m.Redundant...)
	oldest := m.Now.Seq
	for _, p := range all {
		oldest = min(oldest, p.Seq)
	}
	if !pv.known {
		pv.epoch, pv.known = m.Epoch, true
		pv.reset(m.Now.Seq)
		pv.contiguous = 0
		if !m.Genesis || oldest > 1 {
			// Joined mid-epoch: what came before is unknown.
			for _, p := range all {
				r.applyPayload(from, p)
			}
			pv.contiguous, pv.lastTs = m.Now.Seq, m.Now.MsgTs
			r.recheck(e)
			return
		}
		pv.complete = true
	}
	if m.Now.Seq <= pv.contiguous {
		return // late or duplicated
	}
	for _, p := range all {
		if p.Seq > pv.contiguous {
			if _, ok := pv.buf[p.Seq]; !ok {
				pv.buf[p.Seq] = p
			}
		}
	}
	for {
		p, ok := pv.buf[pv.contiguous+1]
		if !ok {
			break
		}
		delete(pv.buf, p.Seq)
		r.applyNext(e, from, pv, p)
	}
	if pv.contiguous+1 < oldest {
		// Statuses were lost beyond what Redundant repeats: the missing
		// payloads will never come. Keep what arrived as lower bounds,
		// continue from the newest, and relearn keys by pulling.
		seqs := make([]uint64, 0, len(pv.buf))
		for s := range pv.buf { // lint:order-independent (sorted below)
			seqs = append(seqs, s)
		}
		slices.Sort(seqs)
		for _, s := range seqs {
			r.applyPayload(from, pv.buf[s])
		}
		last := pv.buf[seqs[len(seqs)-1]]
		pv.contiguous, pv.lastTs = last.Seq, last.MsgTs
		pv.reset(last.Seq)
	}
	r.recheck(e)
}
