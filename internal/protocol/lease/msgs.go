package lease

import (
	"fmt"

	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// Ballot names a mastership of one key: the N-th, held by Node. Ballots
// order by N (candidates always pick an N above every N they know, so no
// two winners share an N); Node breaks ties between rival candidates.
type Ballot struct {
	N    uint64
	Node wire.NodeID
}

// Less reports whether b orders before c.
func (b Ballot) Less(c Ballot) bool {
	if b.N != c.N {
		return b.N < c.N
	}
	return b.Node < c.Node
}

func appendBallot(b []byte, x Ballot) []byte {
	return wire.AppendVarint(wire.AppendUvarint(b, x.N), int64(x.Node))
}

func decodeBallot(d *wire.Decoder) Ballot {
	return Ballot{N: d.Uvarint(), Node: wire.NodeID(d.Varint())}
}

// LRead asks the key's replica in the gateway's region to serve a read.
type LRead struct {
	Op  uint64
	Key string
}

// LReadResp answers an LRead. Retry means the replica cannot answer now
// (its mastership is moving) and nothing was read.
type LReadResp struct {
	Op    uint64
	Key   string
	Found bool
	Rec   store.Record
	Retry bool
	// Moved: an affiliated node without a secondary lease; ask the host.
	Moved bool
	// Affiliates, from a hot key's host: where else reads may go.
	Affiliates []wire.NodeID
}

// MWrite asks the key's master to write (GlobLease Alg. 2). Origin is the
// gateway's region, counted for automatic migration. Inc is the
// incarnation of the receiver it is addressed to (0: not known yet); no
// other incarnation executes it (doc.go, "Requests"). Cond makes it
// conditional on the key's version being Expected (wire.Request.Cond),
// checked by the master as it orders the write (doc.go, "Conditional
// writes").
type MWrite struct {
	Op       uint64
	Key      string
	Rec      store.Record // Version is set by the master
	Passive  bool
	Origin   int
	Inc      uint64
	Cond     bool
	Expected wire.Version
}

// MWriteResp answers an MWrite. Failed: the write did not complete in time
// (its outcome is unknown). Redirect: the receiver is not the master; Master
// names the mastership it knows (the echo of GlobLease §III.E) and nothing
// was written. Retry: the master is handing the key over; nothing was
// written. Stale: the MWrite was addressed to another incarnation of the
// receiver, now Inc, and this one did not execute it (an earlier one may
// have). Conflict: a conditional write whose expected version was not the
// key's current one, Version; nothing was written.
type MWriteResp struct {
	Op       uint64
	Key      string
	Version  wire.Version
	Failed   bool
	Redirect bool
	Retry    bool
	Master   Ballot
	Stale    bool
	Inc      uint64
	Conflict bool
}

// Renew asks the master for a lease (and the current value) of Key.
type Renew struct {
	Key   string
	Nonce uint64
}

// Grant carries a lease and the value; the lease starts on arrival and is
// bound to the master's Ballot. Redirect: the receiver is not the master
// and Ballot is the mastership it knows; no lease.
type Grant struct {
	Key      string
	Nonce    uint64
	Found    bool
	Rec      store.Record
	Ballot   Ballot
	Redirect bool
}

// GrantAck tells the master a lease started: its record starts now.
type GrantAck struct {
	Key   string
	Nonce uint64
}

// Update carries a write from the master of Ballot to a replica. Active
// marks an active update, which the replica acknowledges (the write waits
// for those acks); otherwise it is a lazy update. Neither starts or extends
// a lease: only grants do.
type Update struct {
	Op     uint64
	Key    string
	Rec    store.Record
	Active bool
	Ballot Ballot
}

// UpdateAck answers an active update. !OK: the replica has promised a
// later mastership (Ballot) and refused the update.
type UpdateAck struct {
	Op     uint64
	Key    string
	OK     bool
	Ballot Ballot
}

// Confirm is the master's heartbeat for one key: it asks the group to
// confirm Ballot is still the key's mastership. Each confirming replica
// promises not to vote for another master for a while, which is the
// master's lease to serve reads and grant leases (doc.go, "Masters").
type Confirm struct {
	Key    string
	Nonce  uint64
	Ballot Ballot
}

// ConfirmAck answers a Confirm; !OK carries the later Ballot the replica
// knows, and the master steps down.
type ConfirmAck struct {
	Key    string
	Nonce  uint64
	OK     bool
	Ballot Ballot
}

// Prepare is phase 1 of an election: Ballot's node asks to become the
// key's master. Handoff, when set, is the mastership that consented to the
// move (a migration): a replica that knows that mastership as current may
// vote even inside its promise to that master.
type Prepare struct {
	Key     string
	Ballot  Ballot
	Consent bool
	Handoff Ballot
}

// Promise answers a Prepare. OK: the replica will refuse every smaller
// ballot, and it reports its mastership and record. !OK: Ballot is the
// larger ballot it knows, or, if equal, it is still bound to the master.
type Promise struct {
	Key    string
	Ballot Ballot
	OK     bool
	Known  Ballot
	Found  bool
	Rec    store.Record
}

// Accept is phase 2: the candidate, with a majority's promises, installs
// its mastership and the newest record those promises carried.
type Accept struct {
	Key    string
	Ballot Ballot
	Found  bool
	Rec    store.Record
}

// Accepted answers an Accept.
type Accepted struct {
	Key    string
	Ballot Ballot
	OK     bool
	Known  Ballot
}

// HolderLease is one lease a master hands over: the holder and the time
// left on the master's record, measured on the old master's clock.
type HolderLease struct {
	Node      wire.NodeID
	Remaining int64
}

// Handoff moves a key's mastership (GlobLease §III.E, two phases with echo
// correction): the old master, frozen, sends the key's record and its lease
// records to the new master, which runs an election with the old master's
// consent.
type Handoff struct {
	Key     string
	From    Ballot
	Found   bool
	Rec     store.Record
	Holders []HolderLease
}

// HandoffDone tells the old master how the handoff ended: OK and the new
// Ballot, or !OK (the old master takes the key back: rollback).
type HandoffDone struct {
	Key    string
	OK     bool
	Ballot Ballot
}

// Migrate asks the key's master to hand the key to its replica in Region.
// Inc is as in MWrite.
type Migrate struct {
	Op     uint64
	Key    string
	Region int
	Inc    uint64
}

// MigrateResp answers a Migrate. Err is empty on success; Retry marks a
// refusal that may succeed later; Redirect names the master the receiver
// knows; Stale and Inc are as in MWriteResp.
type MigrateResp struct {
	Op       uint64
	Key      string
	Err      string
	Retry    bool
	Redirect bool
	Master   Ballot
	Stale    bool
	Inc      uint64
}

// Hello tells the other nodes the sender's new incarnation when it starts,
// so their requests are addressed to it from the first (doc.go,
// "Requests").
type Hello struct {
	Inc uint64
}

// Kind implements wire.Msg.
func (*LRead) Kind() string      { return "lease.lread" }
func (*LReadResp) Kind() string  { return "lease.lread_resp" }
func (*MWrite) Kind() string     { return "lease.mwrite" }
func (*MWriteResp) Kind() string { return "lease.mwrite_resp" }
func (*Renew) Kind() string      { return "lease.renew" }
func (*Grant) Kind() string      { return "lease.grant" }
func (*GrantAck) Kind() string   { return "lease.grant_ack" }
func (m *Update) Kind() string {
	if m.Active {
		return "lease.update"
	}
	return "lease.lazy_update"
}
func (*UpdateAck) Kind() string   { return "lease.update_ack" }
func (*Confirm) Kind() string     { return "lease.confirm" }
func (*ConfirmAck) Kind() string  { return "lease.confirm_ack" }
func (*Prepare) Kind() string     { return "lease.prepare" }
func (*Promise) Kind() string     { return "lease.promise" }
func (*Accept) Kind() string      { return "lease.accept" }
func (*Accepted) Kind() string    { return "lease.accepted" }
func (*Handoff) Kind() string     { return "lease.handoff" }
func (*HandoffDone) Kind() string { return "lease.handoff_done" }
func (*Migrate) Kind() string     { return "lease.migrate" }
func (*Hello) Kind() string       { return "lease.hello" }
func (*MigrateResp) Kind() string { return "lease.migrate_resp" }

// MessageTypes lists the protocol's messages for the network codec.
func MessageTypes() []wire.MsgType {
	return []wire.MsgType{
		{Kind: "lease.lread", New: func() wire.Encodable { return new(LRead) }},
		{Kind: "lease.lread_resp", New: func() wire.Encodable { return new(LReadResp) }},
		{Kind: "lease.mwrite", New: func() wire.Encodable { return new(MWrite) }},
		{Kind: "lease.mwrite_resp", New: func() wire.Encodable { return new(MWriteResp) }},
		{Kind: "lease.renew", New: func() wire.Encodable { return new(Renew) }},
		{Kind: "lease.grant", New: func() wire.Encodable { return new(Grant) }},
		{Kind: "lease.grant_ack", New: func() wire.Encodable { return new(GrantAck) }},
		{Kind: "lease.update", New: func() wire.Encodable { return new(Update) }},
		{Kind: "lease.update_ack", New: func() wire.Encodable { return new(UpdateAck) }},
		{Kind: "lease.confirm", New: func() wire.Encodable { return new(Confirm) }},
		{Kind: "lease.confirm_ack", New: func() wire.Encodable { return new(ConfirmAck) }},
		{Kind: "lease.prepare", New: func() wire.Encodable { return new(Prepare) }},
		{Kind: "lease.promise", New: func() wire.Encodable { return new(Promise) }},
		{Kind: "lease.accept", New: func() wire.Encodable { return new(Accept) }},
		{Kind: "lease.accepted", New: func() wire.Encodable { return new(Accepted) }},
		{Kind: "lease.handoff", New: func() wire.Encodable { return new(Handoff) }},
		{Kind: "lease.handoff_done", New: func() wire.Encodable { return new(HandoffDone) }},
		{Kind: "lease.migrate", New: func() wire.Encodable { return new(Migrate) }},
		{Kind: "lease.migrate_resp", New: func() wire.Encodable { return new(MigrateResp) }},
		{Kind: "lease.hello", New: func() wire.Encodable { return new(Hello) }},
		{Kind: "lease.confirm_batch", New: func() wire.Encodable { return new(ConfirmBatch) }},
		{Kind: "lease.confirm_batch_ack", New: func() wire.Encodable { return new(ConfirmBatchAck) }},
		{Kind: "lease.sec_grant", New: func() wire.Encodable { return new(SecGrant) }},
		{Kind: "lease.sec_renew", New: func() wire.Encodable { return new(SecRenew) }},
		{Kind: "lease.sec_update", New: func() wire.Encodable { return new(SecUpdate) }},
		{Kind: "lease.sec_update_ack", New: func() wire.Encodable { return new(SecUpdateAck) }},
	}
}

func errCount(what string, n uint64, left int) error {
	return fmt.Errorf("lease: %s: %d entries in %d bytes", what, n, left)
}

func opKey(b []byte, op uint64, key string) []byte {
	return wire.AppendString(wire.AppendUvarint(b, op), key)
}

// BaseKind is the codec kind of Update (Kind tells active from lazy).
func (*Update) BaseKind() string { return "lease.update" }

// AppendPayload and DecodePayload implement wire.Encodable.
func (m *LRead) AppendPayload(b []byte) []byte { return opKey(b, m.Op, m.Key) }
func (m *LRead) DecodePayload(d *wire.Decoder) { m.Op, m.Key = d.Uvarint(), d.String() }
func (m *LReadResp) AppendPayload(b []byte) []byte {
	b = wire.AppendBool(store.AppendWire(wire.AppendBool(opKey(b, m.Op, m.Key), m.Found), m.Rec), m.Retry)
	b = wire.AppendUvarint(wire.AppendBool(b, m.Moved), uint64(len(m.Affiliates)))
	for _, n := range m.Affiliates {
		b = wire.AppendVarint(b, int64(n))
	}
	return b
}
func (m *LReadResp) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Found, m.Rec, m.Retry = d.Uvarint(), d.String(), d.Bool(), store.DecodeWire(d), d.Bool()
	m.Moved = d.Bool()
	n := d.Uvarint()
	if n > uint64(d.Len()) {
		d.Fail(fmt.Errorf("lease: read reply: %d affiliates in %d bytes", n, d.Len()))
		return
	}
	m.Affiliates = nil
	for range n {
		m.Affiliates = append(m.Affiliates, wire.NodeID(d.Varint()))
	}
}
func (m *MWrite) AppendPayload(b []byte) []byte {
	b = wire.AppendBool(store.AppendWire(opKey(b, m.Op, m.Key), m.Rec), m.Passive)
	b = wire.AppendUvarint(wire.AppendVarint(b, int64(m.Origin)), m.Inc)
	return wire.AppendVersion(wire.AppendBool(b, m.Cond), m.Expected)
}
func (m *MWrite) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Rec, m.Passive, m.Origin = d.Uvarint(), d.String(), store.DecodeWire(d), d.Bool(), int(d.Varint())
	m.Inc, m.Cond, m.Expected = d.Uvarint(), d.Bool(), d.Version()
}
func (m *MWriteResp) AppendPayload(b []byte) []byte {
	b = wire.AppendBool(wire.AppendVersion(opKey(b, m.Op, m.Key), m.Version), m.Failed)
	b = appendBallot(wire.AppendBool(wire.AppendBool(b, m.Redirect), m.Retry), m.Master)
	return wire.AppendBool(wire.AppendUvarint(wire.AppendBool(b, m.Stale), m.Inc), m.Conflict)
}
func (m *MWriteResp) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Version, m.Failed = d.Uvarint(), d.String(), d.Version(), d.Bool()
	m.Redirect, m.Retry, m.Master = d.Bool(), d.Bool(), decodeBallot(d)
	m.Stale, m.Inc, m.Conflict = d.Bool(), d.Uvarint(), d.Bool()
}
func (m *Renew) AppendPayload(b []byte) []byte { return opKey(b, m.Nonce, m.Key) }
func (m *Renew) DecodePayload(d *wire.Decoder) { m.Nonce, m.Key = d.Uvarint(), d.String() }
func (m *Grant) AppendPayload(b []byte) []byte {
	b = store.AppendWire(wire.AppendBool(opKey(b, m.Nonce, m.Key), m.Found), m.Rec)
	return wire.AppendBool(appendBallot(b, m.Ballot), m.Redirect)
}
func (m *Grant) DecodePayload(d *wire.Decoder) {
	m.Nonce, m.Key, m.Found, m.Rec = d.Uvarint(), d.String(), d.Bool(), store.DecodeWire(d)
	m.Ballot, m.Redirect = decodeBallot(d), d.Bool()
}
func (m *GrantAck) AppendPayload(b []byte) []byte { return opKey(b, m.Nonce, m.Key) }
func (m *GrantAck) DecodePayload(d *wire.Decoder) { m.Nonce, m.Key = d.Uvarint(), d.String() }
func (m *Update) AppendPayload(b []byte) []byte {
	return appendBallot(wire.AppendBool(store.AppendWire(opKey(b, m.Op, m.Key), m.Rec), m.Active), m.Ballot)
}
func (m *Update) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Rec, m.Active, m.Ballot = d.Uvarint(), d.String(), store.DecodeWire(d), d.Bool(), decodeBallot(d)
}
func (m *UpdateAck) AppendPayload(b []byte) []byte {
	return appendBallot(wire.AppendBool(opKey(b, m.Op, m.Key), m.OK), m.Ballot)
}
func (m *UpdateAck) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.OK, m.Ballot = d.Uvarint(), d.String(), d.Bool(), decodeBallot(d)
}
func (m *Confirm) AppendPayload(b []byte) []byte {
	return appendBallot(opKey(b, m.Nonce, m.Key), m.Ballot)
}
func (m *Confirm) DecodePayload(d *wire.Decoder) {
	m.Nonce, m.Key, m.Ballot = d.Uvarint(), d.String(), decodeBallot(d)
}
func (m *ConfirmAck) AppendPayload(b []byte) []byte {
	return appendBallot(wire.AppendBool(opKey(b, m.Nonce, m.Key), m.OK), m.Ballot)
}
func (m *ConfirmAck) DecodePayload(d *wire.Decoder) {
	m.Nonce, m.Key, m.OK, m.Ballot = d.Uvarint(), d.String(), d.Bool(), decodeBallot(d)
}
func (m *Prepare) AppendPayload(b []byte) []byte {
	return appendBallot(wire.AppendBool(appendBallot(wire.AppendString(b, m.Key), m.Ballot), m.Consent), m.Handoff)
}
func (m *Prepare) DecodePayload(d *wire.Decoder) {
	m.Key, m.Ballot, m.Consent, m.Handoff = d.String(), decodeBallot(d), d.Bool(), decodeBallot(d)
}
func (m *Promise) AppendPayload(b []byte) []byte {
	b = wire.AppendBool(appendBallot(wire.AppendString(b, m.Key), m.Ballot), m.OK)
	return store.AppendWire(wire.AppendBool(appendBallot(b, m.Known), m.Found), m.Rec)
}
func (m *Promise) DecodePayload(d *wire.Decoder) {
	m.Key, m.Ballot, m.OK = d.String(), decodeBallot(d), d.Bool()
	m.Known, m.Found, m.Rec = decodeBallot(d), d.Bool(), store.DecodeWire(d)
}
func (m *Accept) AppendPayload(b []byte) []byte {
	return store.AppendWire(wire.AppendBool(appendBallot(wire.AppendString(b, m.Key), m.Ballot), m.Found), m.Rec)
}
func (m *Accept) DecodePayload(d *wire.Decoder) {
	m.Key, m.Ballot, m.Found, m.Rec = d.String(), decodeBallot(d), d.Bool(), store.DecodeWire(d)
}
func (m *Accepted) AppendPayload(b []byte) []byte {
	return appendBallot(wire.AppendBool(appendBallot(wire.AppendString(b, m.Key), m.Ballot), m.OK), m.Known)
}
func (m *Accepted) DecodePayload(d *wire.Decoder) {
	m.Key, m.Ballot, m.OK, m.Known = d.String(), decodeBallot(d), d.Bool(), decodeBallot(d)
}
func (m *Handoff) AppendPayload(b []byte) []byte {
	b = store.AppendWire(wire.AppendBool(appendBallot(wire.AppendString(b, m.Key), m.From), m.Found), m.Rec)
	b = wire.AppendUvarint(b, uint64(len(m.Holders)))
	for _, h := range m.Holders {
		b = wire.AppendVarint(wire.AppendVarint(b, int64(h.Node)), h.Remaining)
	}
	return b
}
func (m *Handoff) DecodePayload(d *wire.Decoder) {
	m.Key, m.From, m.Found, m.Rec = d.String(), decodeBallot(d), d.Bool(), store.DecodeWire(d)
	n := d.Uvarint()
	if n > uint64(d.Len()) {
		d.Fail(fmt.Errorf("lease: handoff: %d holders in %d bytes", n, d.Len()))
		return
	}
	m.Holders = nil
	for range n {
		m.Holders = append(m.Holders, HolderLease{Node: wire.NodeID(d.Varint()), Remaining: d.Varint()})
	}
}
func (m *HandoffDone) AppendPayload(b []byte) []byte {
	return appendBallot(wire.AppendBool(wire.AppendString(b, m.Key), m.OK), m.Ballot)
}
func (m *HandoffDone) DecodePayload(d *wire.Decoder) {
	m.Key, m.OK, m.Ballot = d.String(), d.Bool(), decodeBallot(d)
}
func (m *Migrate) AppendPayload(b []byte) []byte {
	return wire.AppendUvarint(wire.AppendVarint(opKey(b, m.Op, m.Key), int64(m.Region)), m.Inc)
}
func (m *Migrate) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Region, m.Inc = d.Uvarint(), d.String(), int(d.Varint()), d.Uvarint()
}
func (m *MigrateResp) AppendPayload(b []byte) []byte {
	b = wire.AppendString(opKey(b, m.Op, m.Key), m.Err)
	b = appendBallot(wire.AppendBool(wire.AppendBool(b, m.Retry), m.Redirect), m.Master)
	return wire.AppendUvarint(wire.AppendBool(b, m.Stale), m.Inc)
}
func (m *MigrateResp) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Err = d.Uvarint(), d.String(), d.String()
	m.Retry, m.Redirect, m.Master = d.Bool(), d.Bool(), decodeBallot(d)
	m.Stale, m.Inc = d.Bool(), d.Uvarint()
}
func (m *Hello) AppendPayload(b []byte) []byte { return wire.AppendUvarint(b, m.Inc) }
func (m *Hello) DecodePayload(d *wire.Decoder) { m.Inc = d.Uvarint() }
