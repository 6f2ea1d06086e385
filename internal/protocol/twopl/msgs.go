package twopl

import (
	"github.com/lightcone/lightcone/internal/protocol/txngw"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// txnID names one attempt of a transaction: TS and Node (its manager's
// clock when the transaction began, and the manager) are its age for
// wound-wait, kept across retries; Attempt tells the retries apart.
type txnID struct {
	TS      int64
	Node    wire.NodeID
	Attempt uint32
}

// older reports whether a is older than b (wound-wait priority); two
// attempts of one transaction are of one age.
func (a txnID) older(b txnID) bool {
	if a.TS != b.TS {
		return a.TS < b.TS
	}
	return a.Node < b.Node
}

func (a txnID) sameTxn(b txnID) bool { return a.TS == b.TS && a.Node == b.Node }

func (a txnID) less(b txnID) bool {
	if !a.sameTxn(b) {
		return a.older(b)
	}
	return a.Attempt < b.Attempt
}

// Submit carries a client's transaction from the node that received it
// to its region's coordinator, the transaction's manager.
type Submit struct{ txngw.Submit }

// Result is a manager's answer to a Submit.
type Result struct{ txngw.Result }

// Prepare asks a region's coordinator to lock Keys (Excl: exclusively)
// for Txn and answer with their records (Paxos commit's first phase).
// Under OCC (occ.go), Read asks for the records only, taking no lock, and
// NoWait asks for the locks only if they are free now and no key's
// version is above Expect's (validation).
type Prepare struct {
	Txn    txnID
	Keys   []string
	Excl   []bool
	Read   bool
	NoWait bool
	Expect []wire.Version
}

// Vote is a coordinator's answer to a Prepare: Granted with the keys'
// records (Found false: absent), or refused (lock timeout, or the
// attempt already ended here).
type Vote struct {
	Txn     txnID
	Read    bool // answers a Prepare with Read
	Granted bool
	Found   []bool
	Recs    []store.Record
}

// Wound asks Txn's manager to abort it (an older transaction waits for
// its locks), if it has not decided; a coordinator also sends it to
// inquire about a grant left undecided for long.
type Wound struct{ Txn txnID }

// Decide is a manager's decision (Paxos commit's second phase): Commit
// applies Recs to Keys; either way the coordinator releases Txn's locks.
type Decide struct {
	Txn    txnID
	Commit bool
	Keys   []string
	Recs   []store.Record
}

// Done confirms a Decide was applied (durably: persist before send).
type Done struct{ Txn txnID }

func (*Submit) Kind() string  { return "twopl.submit" }
func (*Result) Kind() string  { return "twopl.result" }
func (*Prepare) Kind() string { return "twopl.prepare" }
func (*Vote) Kind() string    { return "twopl.vote" }
func (*Wound) Kind() string   { return "twopl.wound" }
func (*Decide) Kind() string  { return "twopl.decide" }
func (*Done) Kind() string    { return "twopl.done" }

// MessageTypes lists the protocol's messages for the network codec.
func MessageTypes() []wire.MsgType {
	return []wire.MsgType{
		{Kind: "twopl.submit", New: func() wire.Encodable { return new(Submit) }},
		{Kind: "twopl.result", New: func() wire.Encodable { return new(Result) }},
		{Kind: "twopl.prepare", New: func() wire.Encodable { return new(Prepare) }},
		{Kind: "twopl.vote", New: func() wire.Encodable { return new(Vote) }},
		{Kind: "twopl.wound", New: func() wire.Encodable { return new(Wound) }},
		{Kind: "twopl.decide", New: func() wire.Encodable { return new(Decide) }},
		{Kind: "twopl.done", New: func() wire.Encodable { return new(Done) }},
	}
}

func appendID(b []byte, t txnID) []byte {
	b = wire.AppendVarint(b, t.TS)
	b = wire.AppendVarint(b, int64(t.Node))
	return wire.AppendUvarint(b, uint64(t.Attempt))
}

func decodeID(d *wire.Decoder) txnID {
	return txnID{TS: d.Varint(), Node: wire.NodeID(d.Varint()), Attempt: uint32(d.Uvarint())}
}

// Parallel slices (Keys and Excl, Found and Recs) are encoded each with
// its own length: a handler checks that they match.

func appendStrings(b []byte, ss []string) []byte { return wire.AppendList(b, ss, wire.AppendString) }
func appendBools(b []byte, vs []bool) []byte     { return wire.AppendList(b, vs, wire.AppendBool) }
func appendRecords(b []byte, rs []store.Record) []byte {
	return wire.AppendList(b, rs, store.AppendWire)
}
func decodeStrings(d *wire.Decoder) []string {
	return wire.DecodeList(d, (*wire.Decoder).String)
}
func decodeBools(d *wire.Decoder) []bool           { return wire.DecodeList(d, (*wire.Decoder).Bool) }
func decodeRecords(d *wire.Decoder) []store.Record { return wire.DecodeList(d, store.DecodeWire) }

// AppendPayload implements wire.Encodable.
func (m *Prepare) AppendPayload(b []byte) []byte {
	b = appendBools(appendStrings(appendID(b, m.Txn), m.Keys), m.Excl)
	b = wire.AppendBool(wire.AppendBool(b, m.Read), m.NoWait)
	return wire.AppendList(b, m.Expect, wire.AppendVersion)
}

// DecodePayload implements wire.Encodable.
func (m *Prepare) DecodePayload(d *wire.Decoder) {
	m.Txn = decodeID(d)
	m.Keys = decodeStrings(d)
	m.Excl = decodeBools(d)
	m.Read, m.NoWait = d.Bool(), d.Bool()
	m.Expect = wire.DecodeList(d, (*wire.Decoder).Version)
}

// AppendPayload implements wire.Encodable.
func (m *Vote) AppendPayload(b []byte) []byte {
	b = wire.AppendBool(wire.AppendBool(appendID(b, m.Txn), m.Read), m.Granted)
	return appendRecords(appendBools(b, m.Found), m.Recs)
}

// DecodePayload implements wire.Encodable.
func (m *Vote) DecodePayload(d *wire.Decoder) {
	m.Txn, m.Read, m.Granted = decodeID(d), d.Bool(), d.Bool()
	m.Found = decodeBools(d)
	m.Recs = decodeRecords(d)
}

// AppendPayload implements wire.Encodable.
func (m *Wound) AppendPayload(b []byte) []byte { return appendID(b, m.Txn) }

// DecodePayload implements wire.Encodable.
func (m *Wound) DecodePayload(d *wire.Decoder) { m.Txn = decodeID(d) }

// AppendPayload implements wire.Encodable.
func (m *Decide) AppendPayload(b []byte) []byte {
	b = wire.AppendBool(appendID(b, m.Txn), m.Commit)
	return appendRecords(appendStrings(b, m.Keys), m.Recs)
}

// DecodePayload implements wire.Encodable.
func (m *Decide) DecodePayload(d *wire.Decoder) {
	m.Txn, m.Commit = decodeID(d), d.Bool()
	m.Keys = decodeStrings(d)
	m.Recs = decodeRecords(d)
}

// AppendPayload implements wire.Encodable.
func (m *Done) AppendPayload(b []byte) []byte { return appendID(b, m.Txn) }

// DecodePayload implements wire.Encodable.
func (m *Done) DecodePayload(d *wire.Decoder) { m.Txn = decodeID(d) }
