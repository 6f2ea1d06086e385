package meteor

import (
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/wire"
)

// sentPayload is a payload as the dispatcher keeps it for redundancy: each
// entry remembers the replicas of its key, so each peer gets only the
// entries of keys it replicates (Fig. 4.13a: statusMessage[key] goes to
// replicaList[key]).
type sentPayload struct {
	seq     uint64
	msgTs   int64
	entries []sentEntry
}

type sentEntry struct {
	Entry
	replicas []wire.NodeID
}

func (p *sentPayload) forPeer(q wire.NodeID) Payload {
	out := Payload{Seq: p.seq, MsgTs: p.msgTs}
	for _, e := range p.entries {
		if slices.Contains(e.replicas, q) {
			out.Entries = append(out.Entries, e.Entry)
		}
	}
	return out
}

// dispatch is the status message dispatcher (Fig. 4.13a, §4.2.4): every
// interval, a status with the writes applied since the last one goes to
// every peer, even when there were none, stamped with this node's clock.
func (r *Replica) dispatch(e env.Env) {
	r.seq++
	p := sentPayload{seq: r.seq, msgTs: e.Now()}
	keys := make([]string, 0, len(r.pending))
	for k := range r.pending { // lint:order-independent (sorted below)
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p.entries = append(p.entries, sentEntry{Entry{k, r.pending[k]}, r.ks.Replicas(nil, k)})
		delete(r.pending, k)
	}
	r.history = append(r.history, p)
	if len(r.history) > r.ks.cfg.Redundant+1 {
		r.history = slices.Delete(r.history, 0, len(r.history)-r.ks.cfg.Redundant-1)
	}
	for q := range r.ks.topo.Nodes {
		peer := wire.NodeID(q)
		if peer == r.id {
			continue
		}
		m := &Status{Epoch: r.epoch, Genesis: r.genesis, Now: r.history[len(r.history)-1].forPeer(peer)}
		for i := len(r.history) - 2; i >= 0; i-- {
			m.Redundant = append(m.Redundant, r.history[i].forPeer(peer))
		}
		e.Send(peer, m)
	}
	// Forget pulls whose answers were lost, so the map stays bounded.
	now := e.Now()
	for k, at := range r.pulls { // lint:order-independent (deletes only)
		if now-at > int64(10*time.Second) {
			delete(r.pulls, k)
		}
	}
	r.recheck(e) // also expires parked reads
}

// peerView is the status map's record of one peer (Fig. 4.13b): the
// versions it has reported applying, and up to which status its report is
// complete.
type peerView struct {
	epoch uint64
	known bool // a status of this epoch has arrived
	// complete: every payload of this epoch since Seq 1 has been applied and
	// the epoch began empty (Genesis), so ver is the peer's whole state as
	// of lastTs. Otherwise only keys in probed are known exactly.
	complete   bool
	contiguous uint64 // every payload up to this Seq has been applied
	lastTs     int64  // MsgTs of payload contiguous
	// floor: a pull answered at a Seq below it does not tell the peer's
	// state (payloads after that Seq may be missing).
	floor  uint64
	buf    map[uint64]Payload // payloads after a gap, waiting for it to fill
	ver    map[string]wire.Version
	probed map[string]uint64 // key → Seq of the pull that told its state
}

func (pv *peerView) apply(p Payload) {
	for _, en := range p.Entries {
		if v, ok := pv.ver[en.Key]; !ok || v.Less(en.Version) {
			pv.ver[en.Key] = en.Version
		}
	}
}

// reset forgets which keys the view knows exactly (after a gap that
// redundancy cannot fill, or a new epoch). Reported versions stay: a
// replica's versions only grow, so they remain lower bounds.
func (pv *peerView) reset(floor uint64) {
	pv.complete = false
	pv.floor = floor
	clear(pv.probed)
	clear(pv.buf)
}

// fresh reports whether the peer's status may serve a read of key with view
// time view: its report is complete for key up to a status stamped after
// view (Fig. 4.14a: status.timestamp + θt > timestamp).
func (pv *peerView) fresh(key string, view int64) bool {
	if pv == nil || !pv.known || pv.lastTs <= view {
		return false
	}
	if pv.complete {
		return true
	}
	s, ok := pv.probed[key]
	return ok && pv.contiguous >= s
}

// onStatus is updateStatus (Fig. 4.13b): add the status to the status map,
// then wake the parked reads.
func (r *Replica) onStatus(e env.Env, from wire.NodeID, m *Status) {
	pv := r.peers[from]
	if pv == nil {
		pv = &peerView{buf: map[uint64]Payload{}, ver: map[string]wire.Version{}, probed: map[string]uint64{}}
		r.peers[from] = pv
	}
	if pv.known && m.Epoch != pv.epoch {
		pv.known = false // the peer restarted
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
				pv.apply(p)
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
		pv.apply(p)
		pv.contiguous, pv.lastTs = p.Seq, p.MsgTs
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
			pv.apply(pv.buf[s])
		}
		last := pv.buf[seqs[len(seqs)-1]]
		pv.contiguous, pv.lastTs = last.Seq, last.MsgTs
		pv.reset(last.Seq)
	}
	r.recheck(e)
}

// pread is a read this node serves as the key's nearest replica: an entry
// of the read subscription map while it waits.
type pread struct {
	gateway  wire.NodeID
	req      *ReadReq
	replicas []wire.NodeID
	deadline int64
}

// park serves a read now if the status map allows, else keeps it in the
// read subscription map (Fig. 4.14a, last line).
func (r *Replica) park(e env.Env, from wire.NodeID, m *ReadReq) {
	pr := &pread{gateway: from, req: m, replicas: r.ks.Replicas(nil, m.Key), deadline: e.Now() + int64(r.ks.cfg.ReadTimeout)}
	if !slices.Contains(pr.replicas, r.id) {
		return // not a replica of the key: a misrouted read; the gateway times out
	}
	if !r.tryRead(e, pr) {
		r.parked = append(r.parked, pr)
	}
}

// recheck wakes the parked reads: after a status, a pull's answer or a
// local write (§4.2.4, read subscription map). Expired reads are dropped;
// their gateways have answered ErrTimeout.
func (r *Replica) recheck(e env.Env) {
	if len(r.parked) == 0 {
		return
	}
	now := e.Now()
	keep := r.parked[:0]
	for _, pr := range r.parked {
		if now > pr.deadline || r.tryRead(e, pr) {
			continue
		}
		keep = append(keep, pr)
	}
	clear(r.parked[len(keep):])
	r.parked = keep
}

// tryRead is readLocal (Fig. 4.14a): the local status and every peer status
// fresher than the view time; if there are at least n − w + 1 of them, the
// newest version among them is the answer, served from the local store once
// the local replica has it (or a newer one). It reports whether it answered.
//
// Lemma 1: a write that completed before the read began is held (it or a
// newer version) by w replicas, and n − w + 1 fresh statuses include at
// least one of them, stamped — by θt's bound (Keyspace.Theta) — after that
// replica applied it; so the answer reflects the write or a newer one. The
// answer is stored locally before it leaves, and every later read served
// here includes the local status, so the reads a gateway's clients make here
// never go back in time.
func (r *Replica) tryRead(e env.Env, pr *pread) bool {
	key := pr.req.Key
	cur, found, err := e.Store().Get(key)
	if err != nil {
		e.Log().Error("meteor: read failed", "key", key, "err", err)
		return false
	}
	var local wire.Version
	if found {
		local = cur.Version
	}
	n := len(pr.replicas)
	need := n - r.ks.cfg.writeAcks(n) + 1
	fresh, best, src := 1, local, wire.NodeID(-1)
	for _, p := range pr.replicas {
		if p == r.id {
			continue
		}
		pv := r.peers[p]
		if pv.fresh(key, pr.req.ViewTs) {
			fresh++
			if v := pv.ver[key]; best.Less(v) {
				best, src = v, p
			}
			continue
		}
		if pv != nil && pv.known && !pv.complete {
			if s, ok := pv.probed[key]; !ok || s < pv.floor {
				r.pull(e, p, key) // learn the peer's state of key
			}
		}
	}
	if fresh < need {
		return false
	}
	if local.Less(best) {
		// The newest version is not here yet: its write notification is
		// in flight or lost. Fetch it from a peer that has it.
		r.pull(e, src, key)
		return false
	}
	resp := &ReadResp{Op: pr.req.Op, Key: key, Found: found, Rec: cur}
	if pr.gateway == r.id {
		r.onReadResp(e, r.id, resp)
	} else {
		e.Send(pr.gateway, resp)
	}
	return true
}

type pullKey struct {
	peer wire.NodeID
	key  string
}

// pull asks peer for its record of key, unless a pull is outstanding and not
// yet overdue.
func (r *Replica) pull(e env.Env, peer wire.NodeID, key string) {
	pk := pullKey{peer, key}
	now := e.Now()
	retry := 2*r.ks.topo.MeanRTT(r.id, peer) + 2*r.ks.cfg.DispatchInterval
	if at, ok := r.pulls[pk]; ok && now-at < int64(retry) {
		return
	}
	r.pulls[pk] = now
	e.Send(peer, &Pull{Key: key})
}

func (r *Replica) onPull(e env.Env, from wire.NodeID, m *Pull) {
	cur, found, err := e.Store().Get(m.Key)
	if err != nil {
		e.Log().Error("meteor: pull failed", "key", m.Key, "err", err)
		return
	}
	// Seq is the last status sent: every change after this answer, and
	// every change not yet in a sent status, is in a later one.
	e.Send(from, &PullResp{Key: m.Key, Found: found, Rec: cur, Epoch: r.epoch, Seq: r.seq})
}

func (r *Replica) onPullResp(e env.Env, from wire.NodeID, m *PullResp) {
	delete(r.pulls, pullKey{from, m.Key})
	if m.Found {
		if _, err := r.applyWrite(e, m.Key, m.Rec); err != nil {
			e.Log().Error("meteor: cannot apply a pulled record", "key", m.Key, "err", err)
			return
		}
	}
	if pv := r.peers[from]; pv != nil && pv.known && pv.epoch == m.Epoch && m.Seq >= pv.floor {
		if m.Found {
			pv.apply(Payload{Entries: []Entry{{m.Key, m.Rec.Version}}})
		}
		if _, ok := pv.probed[m.Key]; !ok {
			pv.probed[m.Key] = m.Seq
		}
	}
	r.recheck(e)
}
