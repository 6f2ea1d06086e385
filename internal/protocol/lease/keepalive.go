package lease

import (
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/wire"
)

// Master-lease keep-alive. A master's lease on a key lapses MasterLease
// after its last confirmation, and the next read or renewal there would
// wait a round trip to a majority for a new one. So every MasterLease/4 a
// master confirms, in one message per peer, every key it served in the
// last 2·MasterLease whose lease has less than half left: busy keys never
// lapse, and the cost is a few messages per peer per period, not one per
// key. The confirmation rule is the single-key one (confirmKey).

// ConfirmBatch confirms many keys' masterships at once.
type ConfirmBatch struct {
	Nonce   uint64
	Keys    []string
	Ballots []Ballot
}

// ConfirmBatchAck answers a ConfirmBatch entry by entry: OK[i], or the
// mastership the replica knows (Known[i]).
type ConfirmBatchAck struct {
	Nonce uint64
	OK    []bool
	Known []Ballot
}

func (*ConfirmBatch) Kind() string    { return "lease.confirm_batch" }
func (*ConfirmBatchAck) Kind() string { return "lease.confirm_batch_ack" }

func (m *ConfirmBatch) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(wire.AppendUvarint(b, m.Nonce), uint64(len(m.Keys)))
	for i, k := range m.Keys {
		b = appendBallot(wire.AppendString(b, k), m.Ballots[i])
	}
	return b
}

func (m *ConfirmBatch) DecodePayload(d *wire.Decoder) {
	m.Nonce = d.Uvarint()
	n := d.Uvarint()
	if n > uint64(d.Len()) {
		d.Fail(errCount("confirm batch", n, d.Len()))
		return
	}
	m.Keys, m.Ballots = make([]string, 0, n), make([]Ballot, 0, n)
	for range n {
		m.Keys = append(m.Keys, d.String())
		m.Ballots = append(m.Ballots, decodeBallot(d))
	}
}

func (m *ConfirmBatchAck) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(wire.AppendUvarint(b, m.Nonce), uint64(len(m.OK)))
	for i, ok := range m.OK {
		b = appendBallot(wire.AppendBool(b, ok), m.Known[i])
	}
	return b
}

func (m *ConfirmBatchAck) DecodePayload(d *wire.Decoder) {
	m.Nonce = d.Uvarint()
	n := d.Uvarint()
	if n > uint64(d.Len()) {
		d.Fail(errCount("confirm batch ack", n, d.Len()))
		return
	}
	m.OK, m.Known = make([]bool, 0, n), make([]Ballot, 0, n)
	for range n {
		m.OK = append(m.OK, d.Bool())
		m.Known = append(m.Known, decodeBallot(d))
	}
}

// batchRound is a keep-alive in flight.
type batchRound struct {
	sent int64
	// per key: the ballot confirmed and who confirmed it
	ballots map[string]Ballot
	acks    map[string]map[wire.NodeID]bool
	// per peer: the keys it was asked about, in message order
	asked map[wire.NodeID][]string
}

// confirmKey is a replica's side of a confirmation of key's mastership
// b: it follows b (adopting it if newer) and promises not to vote against
// it for MasterLease·(1+ρ)/(1−ρ); or it promised a later ballot and says
// which mastership it knows.
func (r *Replica) confirmKey(e env.Env, key string, b Ballot) (bool, Ballot) {
	mt := r.meta(e, key)
	if b.Less(mt.promised) {
		return false, mt.accepted
	}
	if mt.accepted.Less(b) {
		r.adopt(e, key, b)
	}
	r.markActive(e)
	r.voteBlock[key] = e.Now() + r.ks.stretch(r.ks.cfg.MasterLease)
	return true, b
}

// keepAlive sends this period's batched confirmations.
func (r *Replica) keepAlive(e env.Env) {
	now := e.Now()
	ml := int64(r.ks.cfg.MasterLease)
	var keys []string
	for k, used := range r.masterUse { // lint:order-independent: sorted below
		if now-used > 2*ml {
			delete(r.masterUse, k)
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var due []string
	for _, k := range keys {
		mt := r.meta(e, k)
		if r.isMaster(mt) && r.migrating[k] == nil && r.campaigns[k] == nil && r.confirms[k] == nil && r.mlease[k]-now < ml/2 {
			due = append(due, k)
		}
	}
	for len(due) > 0 {
		n := min(len(due), maxBatchKeys)
		r.sendBatch(e, due[:n])
		due = due[n:]
	}
}

// maxBatchKeys bounds the keys one keep-alive round confirms, so a
// message stays small whatever the number of keys a node masters.
const maxBatchKeys = 4096

func (r *Replica) sendBatch(e env.Env, keys []string) {
	br := &batchRound{sent: e.Now(), ballots: map[string]Ballot{}, acks: map[string]map[wire.NodeID]bool{}, asked: map[wire.NodeID][]string{}}
	for _, k := range keys {
		if r.ks.majority() == 1 { // a group of one: this node is the majority
			r.mlease[k] = br.sent + int64(r.ks.cfg.MasterLease)
			continue
		}
		br.ballots[k] = r.meta(e, k).accepted
		br.acks[k] = map[wire.NodeID]bool{r.id: true}
		for _, p := range r.others(k) {
			br.asked[p] = append(br.asked[p], k)
		}
	}
	if len(br.ballots) == 0 {
		return
	}
	r.nextOp++
	nonce := r.nextOp
	r.batches[nonce] = br
	peers := make([]wire.NodeID, 0, len(br.asked))
	for p := range br.asked { // lint:order-independent: sorted below
		peers = append(peers, p)
	}
	slices.Sort(peers)
	for _, p := range peers {
		m := &ConfirmBatch{Nonce: nonce, Keys: br.asked[p]}
		for _, k := range m.Keys {
			m.Ballots = append(m.Ballots, br.ballots[k])
		}
		e.Send(p, m)
	}
	r.stats.Confirms += uint64(len(br.ballots))
	e.SetTimer(r.ks.cfg.RenewTimeout, &leaseTimer{kind: timerBatch, op: nonce})
}

func (r *Replica) onConfirmBatch(e env.Env, from wire.NodeID, m *ConfirmBatch) {
	if len(m.Ballots) != len(m.Keys) {
		return
	}
	ack := &ConfirmBatchAck{Nonce: m.Nonce, OK: make([]bool, len(m.Keys)), Known: make([]Ballot, len(m.Keys))}
	for i, k := range m.Keys {
		ack.OK[i], ack.Known[i] = r.confirmKey(e, k, m.Ballots[i])
	}
	r.send(e, from, ack)
}

func (r *Replica) onConfirmBatchAck(e env.Env, from wire.NodeID, m *ConfirmBatchAck) {
	br := r.batches[m.Nonce]
	if br == nil {
		return
	}
	keys := br.asked[from]
	delete(br.asked, from)
	if len(keys) != len(m.OK) || len(keys) != len(m.Known) {
		return
	}
	for i, k := range keys {
		mt := r.meta(e, k)
		if mt.accepted != br.ballots[k] {
			continue // the mastership changed meanwhile
		}
		if !m.OK[i] {
			if mt.accepted.Less(m.Known[i]) {
				r.superseded(e, k, m.Known[i])
			}
			continue
		}
		br.acks[k][from] = true
		if len(br.acks[k]) == r.ks.majority() && r.isMaster(mt) {
			r.mlease[k] = max(r.mlease[k], br.sent+int64(r.ks.cfg.MasterLease))
			r.refreshAffiliates(e, k)
		}
	}
	if len(br.asked) == 0 {
		delete(r.batches, m.Nonce)
	}
}

// markActive records, durably and before any message that depends on it
// leaves, that this node has granted a lease or confirmed a master: from
// then on a restart must fence (Start). A node that never did needs no
// fence, so a fresh cluster serves at once.
func (r *Replica) markActive(e env.Env) {
	if r.active {
		return
	}
	r.active = true
	r.put(e, activeKey, storeMarker)
}

func keepAlivePeriod(ml time.Duration) time.Duration { return ml / 4 }
