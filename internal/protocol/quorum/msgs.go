package quorum

import (
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// Mutate asks a replica to apply a version of a key (a write, or a read
// repair when Repair is set). Replicas keep the highest version: last writer
// wins. Cond makes it a conditional write (wire.Request.Cond): the replica
// applies it only if the key's version is Expected (doc.go, "Conditional
// writes"; today only single-node clusters take them, so a conditional
// Mutate is handled in place and never crosses the network).
type Mutate struct {
	Op       uint64 // coordinator's operation
	Key      string
	Rec      store.Record
	Repair   bool
	Cond     bool
	Expected wire.Version
}

// MutateAck confirms a Mutate of Key is durable at the replica. For a
// conditional Mutate, Version is the version it was applied at, or, with
// Conflict, the key's current version (nothing was written).
type MutateAck struct {
	Op       uint64
	Key      string
	Conflict bool
	Version  wire.Version
}

// Read asks a replica for its version of Key.
type Read struct {
	Op  uint64
	Key string
}

// ReadResp is a replica's version of a key; Found is false if it has none.
type ReadResp struct {
	Op    uint64
	Key   string
	Found bool
	Rec   store.Record
}

// Clock is a clock probe (commit_wait measured): the sender's wall clock
// as the message left, and its incarnation: the wall time its replica
// started (clocks.go).
type Clock struct {
	Wall  int64
	Epoch int64
}

// Kind implements wire.Msg.
func (m *Mutate) Kind() string {
	if m.Repair {
		return "quorum.repair"
	}
	return "quorum.mutate"
}

// Kind implements wire.Msg.
func (*MutateAck) Kind() string { return "quorum.mutate_ack" }

// Kind implements wire.Msg.
func (*Read) Kind() string { return "quorum.read" }

// Kind implements wire.Msg.
func (*ReadResp) Kind() string { return "quorum.read_resp" }

// Kind implements wire.Msg.
func (*Clock) Kind() string { return "quorum.clock" }

// MessageTypes lists the protocol's messages for the network codec.
func MessageTypes() []wire.MsgType {
	return []wire.MsgType{
		{Kind: "quorum.mutate", New: func() wire.Encodable { return new(Mutate) }},
		{Kind: "quorum.mutate_ack", New: func() wire.Encodable { return new(MutateAck) }},
		{Kind: "quorum.read", New: func() wire.Encodable { return new(Read) }},
		{Kind: "quorum.read_resp", New: func() wire.Encodable { return new(ReadResp) }},
		{Kind: "quorum.clock", New: func() wire.Encodable { return new(Clock) }},
	}
}

// BaseKind is the kind Mutate registers under with the codec; Kind tells
// writes and repairs apart for message counts.
func (*Mutate) BaseKind() string { return "quorum.mutate" }

// AppendPayload implements wire.Encodable.
func (m *Mutate) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, m.Op)
	b = wire.AppendString(b, m.Key)
	b = store.AppendWire(b, m.Rec)
	b = wire.AppendBool(b, m.Repair)
	return wire.AppendVersion(wire.AppendBool(b, m.Cond), m.Expected)
}

// DecodePayload implements wire.Encodable.
func (m *Mutate) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Rec, m.Repair = d.Uvarint(), d.String(), store.DecodeWire(d), d.Bool()
	m.Cond, m.Expected = d.Bool(), d.Version()
}

// AppendPayload implements wire.Encodable.
func (m *MutateAck) AppendPayload(b []byte) []byte {
	b = wire.AppendString(wire.AppendUvarint(b, m.Op), m.Key)
	return wire.AppendVersion(wire.AppendBool(b, m.Conflict), m.Version)
}

// DecodePayload implements wire.Encodable.
func (m *MutateAck) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Conflict, m.Version = d.Uvarint(), d.String(), d.Bool(), d.Version()
}

// AppendPayload implements wire.Encodable.
func (m *Read) AppendPayload(b []byte) []byte {
	return wire.AppendString(wire.AppendUvarint(b, m.Op), m.Key)
}

// DecodePayload implements wire.Encodable.
func (m *Read) DecodePayload(d *wire.Decoder) { m.Op, m.Key = d.Uvarint(), d.String() }

// AppendPayload implements wire.Encodable.
func (m *ReadResp) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, m.Op)
	b = wire.AppendString(b, m.Key)
	b = wire.AppendBool(b, m.Found)
	return store.AppendWire(b, m.Rec)
}

// DecodePayload implements wire.Encodable.
func (m *ReadResp) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Found, m.Rec = d.Uvarint(), d.String(), d.Bool(), store.DecodeWire(d)
}

// AppendPayload implements wire.Encodable.
func (m *Clock) AppendPayload(b []byte) []byte {
	return wire.AppendVarint(wire.AppendVarint(b, m.Wall), m.Epoch)
}

// DecodePayload implements wire.Encodable.
func (m *Clock) DecodePayload(d *wire.Decoder) { m.Wall, m.Epoch = d.Varint(), d.Varint() }
