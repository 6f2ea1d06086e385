package meteor

import (
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// sweepInterval is how often a replica compacts its chains and forgets
// stale gateway state.
const sweepInterval = time.Second

// pread is a read this node serves as the key's nearest replica: an entry
// of the read subscription map while it waits.
type pread struct {
	gateway  wire.NodeID
	req      *ReadReq
	ki       *keyInfo
	replicas []wire.NodeID // ki.replicas
	deadline int64
}

// park serves a read now if the status map allows, else keeps it in the
// read subscription map (Fig. 4.14a, last line).
func (r *Replica) park(e env.Env, from wire.NodeID, m *ReadReq) {
	r.parkKey(e, from, m, r.key(m.Key))
}

// parkKey is park with the key's keyInfo at hand.
func (r *Replica) parkKey(e env.Env, from wire.NodeID, m *ReadReq, ki *keyInfo) {
	pr := pread{gateway: from, req: m, ki: ki, replicas: ki.replicas, deadline: e.Now() + int64(r.ks.cfg.ReadTimeout)}
	if !slices.Contains(pr.replicas, r.id) {
		return // not a replica of the key: a misrouted read; the gateway times out
	}
	if !r.tryRead(e, &pr) {
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
		if now > pr.deadline || r.tryRead(e, &pr) {
			continue
		}
		keep = append(keep, pr)
	}
	clear(r.parked[len(keep):])
	r.parked = keep
}

// commitState is what a replica knows of whether a version is committed:
// applied by w replicas (doc.go, "Commit").
type commitState uint8

const (
	unresolved  commitState = iota
	committed               // w replicas applied it
	uncommitted             // n − w + 1 replicas closed past it without it: never committed
)

// peerVersions returns, for each replica of key (ki.replicas), the
// versions it has reported applying (keyReports; nil for this replica and
// for peers that reported none): the key's row of the status map, or nils
// in buf's array if it has none. ki keeps the row it finds, so that the
// next call need not look the key up while the row stays (a key's reports
// were looked up by key string for every read). The row stays valid while
// the caller adds no report.
func (r *Replica) peerVersions(buf [][]wire.Version, key string, ki *keyInfo) [][]wire.Version {
	kr := ki.reports
	if kr == nil || kr.dropped {
		kr = r.reports[key]
		ki.reports = kr
	}
	if kr != nil {
		return kr.vers
	}
	if len(ki.replicas) > len(buf) {
		return make([][]wire.Version, len(ki.replicas))
	}
	clear(buf)
	return buf[:len(ki.replicas)]
}

// resolve decides whether version v of key, whose replicas are reps, is
// committed, from the local chain and the status map; vers are the peers'
// reports of key (peerVersions). Applied versions are durable and closures
// are kept, so an answer other than unresolved never changes.
func (r *Replica) resolve(e env.Env, key string, reps []wire.NodeID, vers [][]wire.Version, chain []link, v wire.Version) commitState {
	if loaded(v) {
		return committed
	}
	n := len(reps)
	w := r.ks.cfg.writeAcks(n)
	held, absent := 0, 0
	// Compaction drops only versions older than the key's committed base,
	// or known never to commit, and every read views above the watermark,
	// which is above every base: no read or compaction evaluates a version
	// below a base, so absence from the local chain or a status-built view
	// is exact for every version evaluated here. A pulled list is exact only
	// above the sender's watermark or its compaction floor (knowsAbsent).
	if applied(chain, v) {
		held++
	} else if r.closure(e) >= v.TS.WallNanos {
		absent++
	}
	// Once w replicas hold v, the others cannot change the answer.
	if held >= w {
		return committed
	}
	for i, p := range reps {
		if p == r.id {
			continue
		}
		pv := r.peer(p)
		if pv == nil {
			continue
		}
		switch {
		case hasVersion(vers[i], v):
			held++
			if held >= w {
				return committed
			}
		case pv.knowsAbsent(key, vers[i], v):
			absent++
		}
	}
	switch {
	case held >= w:
		return committed
	case absent >= n-w+1:
		return uncommitted
	}
	return unresolved
}

// tryRead is readLocal (Fig. 4.14a) with commit resolution: it answers the
// read with the newest committed version of the key stamped at or before
// the view time T, and reports whether it answered.
//
// It needs n − w + 1 replicas whose closure has passed T, itself included
// when its own has: every committed version stamped at or before T was
// applied by w replicas, before each closed past it, so one of those
// n − w + 1 reports it (the thesis' r + w > n, Lemma 1). The candidates are
// the versions those replicas report at or before T; the newest committed
// one is the answer, skipping versions known never to commit, and the read
// waits while the newest candidate not known uncommitted is unresolved.
// Every read thus returns exactly the newest committed version at its view
// time, which is what makes the reads of different keys agree (Lemma 3's
// consistent cut, doc.go "Reads").
func (r *Replica) tryRead(e env.Env, pr *pread) bool {
	key, view := pr.req.Key, pr.req.ViewTs
	if view <= r.gcMark {
		r.answer(e, pr, r.readResp(ReadResp{Op: pr.req.Op, Key: key, TooOld: true}))
		return true
	}
	chain, err := r.readChain(e.Store(), key, pr.ki)
	if err != nil {
		e.Log().Error("meteor: read failed", "key", key, "err", err)
		return false
	}
	if len(chain) > 1 && pr.ki.dirtyGen != r.dirtyGen {
		// The set of keys to compact is not stored: a restarted replica
		// relearns it from the keys it touches. (Looked up first: most
		// reads find the key there, and a lookup costs less than a store;
		// not at all if the keyInfo saw it there since the last removal.)
		if _, ok := r.dirty[key]; !ok {
			r.dirty[key] = struct{}{}
		}
		pr.ki.dirtyGen = r.dirtyGen
	}
	n := len(pr.replicas)
	need := n - r.ks.cfg.writeAcks(n) + 1
	// Most keys have few replicas: the lists fit on the stack (a buffer
	// inside cands would make it escape).
	var lists, versBuf [4][]wire.Version
	cands := candidates{lists: lists[:0]}
	vers := r.peerVersions(versBuf[:], key, pr.ki)
	fresh := 0
	// This replica counts itself once its closure has passed the view; it
	// may promise that early, up to ClosureLead ahead of its clock, as its
	// statuses do.
	if r.promise(e, min(view, e.Now()+int64(r.ks.cfg.closureLead()))) >= view {
		fresh++
		cands.chain = chain[:upTo(chain, view)]
	}
	for i, p := range pr.replicas {
		if p == r.id {
			continue
		}
		pv := r.peer(p)
		if pv.closedAt(key, view) {
			fresh++
			vs := vers[i]
			cands.lists = append(cands.lists, vs[:versionsUpTo(vs, view)])
			continue
		}
		r.probe(e, p, pv, key)
	}
	if fresh < need {
		return false
	}
	if len(chain) > 0 && loaded(chain[0].Version) {
		// A bulk load put this version on every replica, unreported by
		// statuses: it is a candidate whichever replicas are counted.
		cands.load = chain[0].Version
	}
	for v, ok := cands.next(); ok; v, ok = cands.next() {
		switch r.resolve(e, key, pr.replicas, vers, chain, v) {
		case uncommitted:
			continue
		case unresolved:
			// Learn the state of the key at peers whose report is
			// incomplete; statuses bring the rest.
			for _, p := range pr.replicas {
				if p != r.id {
					r.probe(e, p, r.peer(p), key)
				}
			}
			return false
		}
		if i := chainIndex(chain, v); i >= 0 {
			r.answer(e, pr, r.readResp(ReadResp{Op: pr.req.Op, Key: key, Found: true, Rec: chain[i].Record}))
			return true
		}
		// This replica does not hold the answer (its write notification is
		// in flight or lost): fetch it from the nearest replica that does.
		var src wire.NodeID = -1
		for i, p := range pr.replicas {
			if p != r.id && hasVersion(vers[i], v) && (src < 0 || r.rank[p] < r.rank[src]) {
				src = p
			}
		}
		if src >= 0 {
			r.pull(e, src, key, v)
		}
		return false
	}
	r.answer(e, pr, r.readResp(ReadResp{Op: pr.req.Op, Key: key}))
	return true
}

// candidates are the versions a read may return (tryRead): the applied
// versions of this replica's chain and the versions the fresh peers report,
// each list sorted oldest first and cut at the view time, and the bulk
// load's version. next walks their
// union newest first, each version once, merging from the tops of the
// lists: a read usually stops at the newest, so sorting them all would be
// wasted. Compaction walks the versions it may drop the same way, the
// chain's copies included (copies).
type candidates struct {
	chain  []link
	lists  [][]wire.Version
	load   wire.Version // the bulk load's version, if a candidate (not zero)
	copies bool         // the chain's links that are copies are candidates too
}

// next returns the newest candidate not yet returned, or false when none is
// left.
func (c *candidates) next() (wire.Version, bool) {
	for !c.copies && len(c.chain) > 0 && !c.chain[len(c.chain)-1].Applied {
		c.chain = c.chain[:len(c.chain)-1]
	}
	var top wire.Version
	found := false
	if len(c.chain) > 0 {
		top, found = c.chain[len(c.chain)-1].Version, true
	}
	for _, l := range c.lists {
		if len(l) > 0 && (!found || top.Less(l[len(l)-1])) {
			top, found = l[len(l)-1], true
		}
	}
	if !found {
		// The bulk load's version is older than every write's: it comes
		// last.
		top, c.load = c.load, wire.Version{}
		return top, !top.IsZero()
	}
	if c.load == top {
		c.load = wire.Version{}
	}
	// Each list holds a version at most once: popping the top of every list
	// that has it returns it once.
	if len(c.chain) > 0 && c.chain[len(c.chain)-1].Version == top {
		c.chain = c.chain[:len(c.chain)-1]
	}
	for i, l := range c.lists {
		if len(l) > 0 && l[len(l)-1] == top {
			c.lists[i] = l[:len(l)-1]
		}
	}
	return top, true
}

// upTo is the number of links of chain stamped at or before t (versions
// order by timestamp first, so they are a prefix). A read's view is
// recent, so few links follow it: a short walk back from the end usually
// finds it before a binary search would.
func upTo(chain []link, t int64) int {
	i := len(chain)
	for ; i > 0 && len(chain)-i < 4; i-- {
		if chain[i-1].Version.TS.WallNanos <= t {
			return i
		}
	}
	j, _ := slices.BinarySearchFunc(chain[:i], t, func(l link, t int64) int { return cmpStamp(l.Version, t) })
	return j
}

// versionsUpTo is upTo for a sorted set of versions.
func versionsUpTo(vs []wire.Version, t int64) int {
	i := len(vs)
	for ; i > 0 && len(vs)-i < 4; i-- {
		if vs[i-1].TS.WallNanos <= t {
			return i
		}
	}
	j, _ := slices.BinarySearchFunc(vs[:i], t, cmpStamp)
	return j
}

// cmpStamp orders v before every version stamped after t and after every
// other: binary search finds the first version stamped after t.
func cmpStamp(v wire.Version, t int64) int {
	if v.TS.WallNanos <= t {
		return -1
	}
	return 1
}

// probe pulls peer's state of key if its view does not know the key
// exactly (a gap, or the peer restarted).
func (r *Replica) probe(e env.Env, p wire.NodeID, pv *peerView, key string) {
	if pv == nil || !pv.known || pv.complete {
		return
	}
	if pr, ok := pv.probed[key]; !ok || pr.seq < pv.floor {
		r.pull(e, p, key, wire.Version{})
	}
}

// readResp is m, carved from the replica's slab.
func (r *Replica) readResp(m ReadResp) *ReadResp {
	p := r.slabs.readResps.New()
	*p = m
	return p
}

func (r *Replica) answer(e env.Env, pr *pread, m *ReadResp) {
	if pr.gateway == r.id {
		r.onReadResp(e, r.id, m)
		return
	}
	e.Send(pr.gateway, m)
}

type pullKey struct {
	peer wire.NodeID
	key  string
	want wire.Version
}

// pull asks peer for its versions of key (and the value of want, if set),
// unless such a pull is outstanding and not yet overdue.
func (r *Replica) pull(e env.Env, peer wire.NodeID, key string, want wire.Version) {
	pk := pullKey{peer, key, want}
	now := e.Now()
	retry := 2*r.ks.topo.MeanRTT(r.id, peer) + 2*r.ks.cfg.DispatchInterval
	if at, ok := r.pulls[pk]; ok && now-at < int64(retry) {
		return
	}
	r.pulls[pk] = now
	r.stats.Pulls++
	e.Send(peer, &Pull{Key: key, Want: want})
}

func (r *Replica) onPull(e env.Env, from wire.NodeID, m *Pull) {
	ki := r.key(m.Key)
	chain, err := r.readChain(e.Store(), m.Key, ki)
	if err != nil {
		e.Log().Error("meteor: pull failed", "key", m.Key, "err", err)
		return
	}
	floor, err := loadFloor(e.Store(), m.Key, ki)
	if err != nil {
		e.Log().Error("meteor: pull failed", "key", m.Key, "err", err)
		return
	}
	// Seq is the last status sent: every version applied after this answer
	// is in a later one.
	resp := &PullResp{Key: m.Key, Epoch: r.epoch, Seq: r.seq, Watermark: r.gcMark, Floor: floor}
	for _, c := range chain {
		if c.Applied {
			resp.Versions = append(resp.Versions, c.Version)
		}
	}
	if !m.Want.IsZero() {
		if i := chainIndex(chain, m.Want); i >= 0 {
			resp.Has, resp.Rec = true, chain[i].Record
		}
	}
	e.Send(from, resp)
}

// onPullResp records what a pull told. A fetched value joins the local
// chain as a copy, never as applied: the local closure may have passed its
// timestamp, and the local status reports only what this replica applied.
func (r *Replica) onPullResp(e env.Env, from wire.NodeID, m *PullResp) {
	delete(r.pulls, pullKey{from, m.Key, m.Rec.Version})
	delete(r.pulls, pullKey{from, m.Key, wire.Version{}})
	if m.Has {
		if err := r.keepCopy(e, m.Key, m.Rec); err != nil {
			e.Log().Error("meteor: cannot keep a fetched value", "key", m.Key, "err", err)
		}
	}
	if pv := r.peer(from); pv != nil {
		for _, v := range m.Versions {
			r.addPeerVersion(from, m.Key, v)
		}
		if pv.known && pv.epoch == m.Epoch && m.Seq >= pv.floor {
			if _, ok := pv.probed[m.Key]; !ok {
				pv.probed[m.Key] = probe{seq: m.Seq, mark: m.Watermark, floor: m.Floor}
			}
		}
	}
	r.recheck(e)
}

// keepCopy adds rec to key's chain as a copy, unless the chain holds its
// version already.
func (r *Replica) keepCopy(e env.Env, key string, rec store.Record) error {
	ki := r.key(key)
	chain, err := r.readChain(e.Store(), key, ki)
	if err != nil || chainIndex(chain, rec.Version) >= 0 {
		return err
	}
	chain, err = r.storeInsert(e, ki, chain, link{Record: rec})
	if err != nil {
		return err
	}
	if len(chain) > 1 {
		r.dirty[key] = struct{}{}
	}
	return nil
}

// undirty removes key from the keys to compact.
func (r *Replica) undirty(key string) {
	delete(r.dirty, key)
	r.dirtyGen++
}

// sweep compacts the chains of keys with several versions, and forgets
// overdue pulls and order floors no operation can need.
func (r *Replica) sweep(e env.Env) {
	now := e.Now()
	// The watermark follows the closure, not the clock, so a clock that
	// jumps ahead and back never lets a read view below what was compacted.
	r.gcMark = max(r.gcMark, r.closure(e)-int64(r.ks.cfg.Horizon))
	keys := make([]string, 0, len(r.dirty))
	for k := range r.dirty { // lint:order-independent (sorted below)
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := r.compact(e, k, r.gcMark); err != nil {
			e.Log().Error("meteor: cannot compact a key's versions", "key", k, "err", err)
		}
	}
	for k, at := range r.pulls { // lint:order-independent (deletes only)
		if now-at > int64(10*time.Second) {
			delete(r.pulls, k)
		}
	}
	for c, fl := range r.floors { // lint:order-independent (deletes only)
		// The watermark is every client's floor (Replica.floor).
		if fl <= r.gcMark {
			delete(r.floors, c)
		}
	}
}

// anyOldest reports whether the oldest version of a key in the local chain
// or in a peer's report of it (vers, peerVersions; each sorted oldest
// first) satisfies old: whether any version is old enough to matter to
// compact.
func anyOldest(vers [][]wire.Version, chain []link, old func(wire.Version) bool) bool {
	if len(chain) > 0 && old(chain[0].Version) {
		return true
	}
	for _, vs := range vers {
		if len(vs) > 0 && old(vs[0]) {
			return true
		}
	}
	return false
}

// atMostOneVersion reports whether the local chain of a key and the peers'
// reports of it (vers, peerVersions) hold one version between them, or
// none.
func atMostOneVersion(vers [][]wire.Version, chain []link) bool {
	if len(chain) > 1 {
		return false
	}
	var one wire.Version
	if len(chain) == 1 {
		one = chain[0].Version
	}
	for _, vs := range vers {
		switch {
		case len(vs) > 1:
			return false
		case len(vs) == 1 && one.IsZero():
			one = vs[0]
		case len(vs) == 1 && vs[0] != one:
			return false
		}
	}
	return true
}

// compact drops the versions of key no read can return: reads view at
// least gc (tryRead refuses older views), so of the versions stamped at or
// before gc only the newest committed one can be an answer, and versions
// known never to commit cannot be. It compacts the local chain and the
// status map's reports alike.
func (r *Replica) compact(e env.Env, key string, gc int64) error {
	ki := r.key(key)
	chain, err := r.readChain(e.Store(), key, ki)
	if err != nil {
		return err
	}
	reps := ki.replicas
	var versBuf [4][]wire.Version
	vers := r.peerVersions(versBuf[:], key, ki)
	if !anyOldest(vers, chain, func(v wire.Version) bool { return v.TS.WallNanos <= gc }) {
		// Nothing is stamped at or before gc: nothing to drop (the common
		// case: most sweeps find every version of a dirty key recent).
		if atMostOneVersion(vers, chain) {
			r.undirty(key)
		}
		return nil
	}
	// The versions stamped at or before gc, newest first, down to the
	// newest committed one, the base: those above it known never to commit
	// are dropped, and every version below it. Each list is sorted oldest
	// first, so they are merged from their ends, not sorted again.
	var lists [4][]wire.Version
	olds := candidates{chain: chain[:upTo(chain, gc)], lists: lists[:0], copies: true}
	for _, vs := range vers {
		if vs != nil {
			olds.lists = append(olds.lists, vs[:versionsUpTo(vs, gc)])
		}
	}
	var base wire.Version
	var undone []wire.Version
	for v, ok := olds.next(); ok && base.IsZero(); v, ok = olds.next() {
		switch r.resolve(e, key, reps, vers, chain, v) {
		case committed:
			base = v
		case uncommitted:
			undone = append(undone, v)
		}
	}
	// The zero version is below every version: without a base, only the
	// undone are dropped.
	drop := func(v wire.Version) bool { return v.Less(base) || slices.Contains(undone, v) }
	if len(undone) == 0 && !anyOldest(vers, chain, func(v wire.Version) bool { return v.Less(base) }) {
		if atMostOneVersion(vers, chain) {
			r.undirty(key)
		}
		return nil
	}
	kept := make([]link, 0, len(chain))
	prefix := true // the dropped links are the oldest (storeSuffix)
	for _, c := range chain {
		if !drop(c.Version) {
			kept = append(kept, c)
		} else if len(kept) > 0 {
			prefix = false
		}
	}
	if !base.IsZero() {
		// Stored with the chain (one handler): pull answers must not
		// claim exactness below what this compaction dropped.
		if err := raiseFloor(e, key, ki, base); err != nil {
			return err
		}
	}
	if len(kept) != len(chain) {
		var err error
		if prefix {
			err = r.storeSuffix(e, ki, chain, kept)
		} else {
			err = r.storeChain(e, ki, kept)
		}
		if err != nil {
			return err
		}
		r.stats.Compacted += uint64(len(chain) - len(kept))
	}
	left := len(kept)
	if kr := ki.reports; kr != nil { // the key's row, as peerVersions found it
		reported := false
		for i, vs := range kr.vers {
			vs = slices.DeleteFunc(vs, drop)
			if len(vs) == 0 {
				vs = nil
			}
			kr.vers[i] = vs
			reported = reported || vs != nil
			left = max(left, len(vs))
		}
		if !reported {
			delete(r.reports, key)
			kr.dropped = true
		}
	}
	if left <= 1 {
		r.undirty(key)
	}
	return nil
}
