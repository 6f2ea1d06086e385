package lease

import (
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// LRead asks the key's replica in the gateway's region to serve a read.
type LRead struct {
	Op  uint64
	Key string
}

// LReadResp answers an LRead.
type LReadResp struct {
	Op    uint64
	Key   string
	Found bool
	Rec   store.Record
}

// MWrite asks the key's master to write (GlobLease Alg. 2).
type MWrite struct {
	Op      uint64
	Key     string
	Rec     store.Record // Version is set by the master
	Passive bool
}

// MWriteResp answers an MWrite; Failed means the write did not complete in
// time (its outcome is unknown).
type MWriteResp struct {
	Op      uint64
	Key     string
	Version wire.Version
	Failed  bool
}

// Renew asks the master for a lease (and the current value) of Key.
type Renew struct {
	Key   string
	Nonce uint64
}

// Grant carries a lease and the value; the lease starts on arrival.
type Grant struct {
	Key   string
	Nonce uint64
	Found bool
	Rec   store.Record
}

// GrantAck tells the master a lease started: its record starts now.
type GrantAck struct {
	Key   string
	Nonce uint64
}

// Update carries a write to a replica. Active marks an active update, which
// the replica acknowledges (the write waits for those acks); otherwise it is
// a lazy update. Neither starts or extends a lease: only grants do.
type Update struct {
	Op     uint64
	Key    string
	Rec    store.Record
	Active bool
}

// UpdateAck confirms an active update: the replica has the value and its
// lease started.
type UpdateAck struct {
	Op  uint64
	Key string
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
func (*UpdateAck) Kind() string { return "lease.update_ack" }

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
	}
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
	return store.AppendWire(wire.AppendBool(opKey(b, m.Op, m.Key), m.Found), m.Rec)
}
func (m *LReadResp) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Found, m.Rec = d.Uvarint(), d.String(), d.Bool(), store.DecodeWire(d)
}
func (m *MWrite) AppendPayload(b []byte) []byte {
	return wire.AppendBool(store.AppendWire(opKey(b, m.Op, m.Key), m.Rec), m.Passive)
}
func (m *MWrite) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Rec, m.Passive = d.Uvarint(), d.String(), store.DecodeWire(d), d.Bool()
}
func (m *MWriteResp) AppendPayload(b []byte) []byte {
	return wire.AppendBool(wire.AppendVersion(opKey(b, m.Op, m.Key), m.Version), m.Failed)
}
func (m *MWriteResp) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Version, m.Failed = d.Uvarint(), d.String(), d.Version(), d.Bool()
}
func (m *Renew) AppendPayload(b []byte) []byte { return opKey(b, m.Nonce, m.Key) }
func (m *Renew) DecodePayload(d *wire.Decoder) { m.Nonce, m.Key = d.Uvarint(), d.String() }
func (m *Grant) AppendPayload(b []byte) []byte {
	return store.AppendWire(wire.AppendBool(opKey(b, m.Nonce, m.Key), m.Found), m.Rec)
}
func (m *Grant) DecodePayload(d *wire.Decoder) {
	m.Nonce, m.Key, m.Found, m.Rec = d.Uvarint(), d.String(), d.Bool(), store.DecodeWire(d)
}
func (m *GrantAck) AppendPayload(b []byte) []byte { return opKey(b, m.Nonce, m.Key) }
func (m *GrantAck) DecodePayload(d *wire.Decoder) { m.Nonce, m.Key = d.Uvarint(), d.String() }
func (m *Update) AppendPayload(b []byte) []byte {
	return wire.AppendBool(store.AppendWire(opKey(b, m.Op, m.Key), m.Rec), m.Active)
}
func (m *Update) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Rec, m.Active = d.Uvarint(), d.String(), store.DecodeWire(d), d.Bool()
}
func (m *UpdateAck) AppendPayload(b []byte) []byte { return opKey(b, m.Op, m.Key) }
func (m *UpdateAck) DecodePayload(d *wire.Decoder) { m.Op, m.Key = d.Uvarint(), d.String() }
