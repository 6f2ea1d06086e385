package catenae

import (
	"github.com/lightcone/lightcone/internal/protocol/txngw"
	"github.com/lightcone/lightcone/internal/wire"
)

// Submit carries a client's transaction from the node that received it
// to its region's coordinator (Client: the session, for read-your-writes:
// doc.go, "Read-only transactions").
type Submit struct{ txngw.Submit }

// Result is a coordinator's answer to a Submit.
type Result struct{ txngw.Result }

// Entry is one transaction of a batch: what every region needs to run it,
// and who submitted it (the origin's duplicate filter survives a restart).
type Entry struct {
	Gateway wire.NodeID
	Seq     uint64
	Client  wire.ClientID
	Offset  int64 // ns into its epoch when the origin received it (§4.3.2: "a local physical timestamp")
	Txn     wire.Txn
}

// Report is one region's execution of one conflicting component: its
// order of the component's transactions (positions in the component's
// canonical member list), the dependencies the thesis's validation
// compares (§4.3.3, "Validate Transactions"). KeyOrders is set only by the
// reorder-chain teeth: one order per key.
type Report struct {
	Batch     int64  // the component's epoch
	Comp      uint32 // the component's first member, as a position in its batch
	Order     []uint32
	KeyOrders [][]uint32
}

// Payload is what one region's coordinator says of its epochs From..EID:
// the transactions it received in EID (none in the earlier ones: a gap
// after a restart or a clock jump), and the reports it finished during
// EID. A payload never changes once sent (persisted first).
type Payload struct {
	From, EID int64
	Txns      []Entry
	Reports   []Report
}

// Epoch is an epoch message (§4.3.2): the sender's payloads the receiver
// may lack (the newest three, as in the thesis, and older unacknowledged
// ones once overdue), the sender's first epoch, per region the newest
// epoch through which the sender holds every payload of that region (in
// memory: what to resend), and its applied mark (persisted: what the
// receiver may forget).
type Epoch struct {
	From     int // region
	Start    int64
	Have     []int64
	Applied  int64 // the sender's applied mark: it needs no payload through it again
	Payloads []Payload
}

func (*Submit) Kind() string { return "catenae.submit" }
func (*Result) Kind() string { return "catenae.result" }
func (*Epoch) Kind() string  { return "catenae.epoch" }

// MessageTypes lists the protocol's messages for the network codec.
func MessageTypes() []wire.MsgType {
	return []wire.MsgType{
		{Kind: "catenae.submit", New: func() wire.Encodable { return new(Submit) }},
		{Kind: "catenae.result", New: func() wire.Encodable { return new(Result) }},
		{Kind: "catenae.epoch", New: func() wire.Encodable { return new(Epoch) }},
	}
}

func appendOrder(b []byte, o []uint32) []byte {
	return wire.AppendList(b, o, func(b []byte, x uint32) []byte { return wire.AppendUvarint(b, uint64(x)) })
}

func decodeOrder(d *wire.Decoder) []uint32 {
	return wire.DecodeList(d, func(d *wire.Decoder) uint32 { return uint32(d.Uvarint()) })
}

func appendPayload(b []byte, p Payload) []byte {
	b = wire.AppendVarint(wire.AppendVarint(b, p.From), p.EID)
	b = wire.AppendList(b, p.Txns, func(b []byte, e Entry) []byte {
		b = wire.AppendVarint(b, int64(e.Gateway))
		b = wire.AppendUvarint(b, e.Seq)
		b = wire.AppendVarint(b, int64(e.Client))
		b = wire.AppendVarint(b, e.Offset)
		return wire.AppendTxn(b, e.Txn)
	})
	return wire.AppendList(b, p.Reports, func(b []byte, r Report) []byte {
		b = wire.AppendVarint(b, r.Batch)
		b = wire.AppendUvarint(b, uint64(r.Comp))
		b = appendOrder(b, r.Order)
		return wire.AppendList(b, r.KeyOrders, appendOrder)
	})
}

func decodePayload(d *wire.Decoder) Payload {
	var p Payload
	p.From, p.EID = d.Varint(), d.Varint()
	p.Txns = wire.DecodeList(d, func(d *wire.Decoder) Entry {
		return Entry{Gateway: wire.NodeID(d.Varint()), Seq: d.Uvarint(), Client: wire.ClientID(d.Varint()), Offset: d.Varint(), Txn: wire.DecodeTxn(d)}
	})
	p.Reports = wire.DecodeList(d, func(d *wire.Decoder) Report {
		r := Report{Batch: d.Varint(), Comp: uint32(d.Uvarint())}
		r.Order = decodeOrder(d)
		r.KeyOrders = wire.DecodeList(d, decodeOrder)
		return r
	})
	return p
}

// AppendPayload implements wire.Encodable.
func (m *Epoch) AppendPayload(b []byte) []byte {
	b = wire.AppendVarint(b, int64(m.From))
	b = wire.AppendVarint(b, m.Start)
	b = wire.AppendList(b, m.Have, wire.AppendVarint)
	b = wire.AppendVarint(b, m.Applied)
	return wire.AppendList(b, m.Payloads, appendPayload)
}

// DecodePayload implements wire.Encodable.
func (m *Epoch) DecodePayload(d *wire.Decoder) {
	m.From, m.Start = int(d.Varint()), d.Varint()
	m.Have = wire.DecodeList(d, (*wire.Decoder).Varint)
	m.Applied = d.Varint()
	m.Payloads = wire.DecodeList(d, decodePayload)
}
