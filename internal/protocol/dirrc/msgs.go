package dirrc

import (
	"fmt"

	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/protocol/rsm"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// source is one entry of a row's sync chain: a frontend that was granted
// the row at Epoch. The newest entry whose frontend is current as of its
// epoch has the row's latest copy (doc.go, rule 5).
type source struct {
	FE    wire.NodeID
	Epoch uint64
}

// hold names one of a frontend's holds: the row and the nonce of the
// fe_acquire that queued it.
type hold struct {
	Key     string
	Nonce   uint64
	Epoch   uint64 // of the grant the frontend holds
	Current bool   // the frontend's copy is current as of Epoch
	Wanted  bool   // in a HeartbeatAck: another frontend waits for the row
}

// FeAcquire is a frontend's fe_acquire: queue me for Key (thesis §4.3.1).
// Nonce is fresh per attempt; a new nonce from a frontend already queued
// ends its earlier place (rule 3).
//
// Sent is when the frontend sent this copy (its clock): a grant that
// answers it echoes it, and the hold's lease counts from it (rule 6).
type FeAcquire struct {
	Key   string
	Nonce uint64
	Sent  int64
}

// FeRelease is a frontend's fe_release: dequeue the hold Nonce of Key.
type FeRelease struct {
	Key     string
	Nonce   uint64
	Epoch   uint64
	Current bool
}

// Grant tells the head of Key's queue that it holds the row at Epoch, and
// where to sync from: Chain, newest first (empty: the preloaded row, which
// every frontend has). Sent echoes the Sent of an fe_acquire of Nonce the
// directory received before it last renewed the head's deadline to a full
// hold_lease (0: none; the lease counts from the first fe_acquire).
type Grant struct {
	Key   string
	Nonce uint64
	Epoch uint64
	Chain []source
	Sent  int64
}

// Heartbeat renews a frontend's holds (rule 7).
type Heartbeat struct {
	Seq   uint64
	Holds []hold
}

// HeartbeatAck lists the holds of a Heartbeat the directory renewed.
type HeartbeatAck struct {
	Seq   uint64
	Holds []hold
}

// SyncReq asks a former holder's region (any member of its frontend
// group) for its copy of Key, if it is current as of Want; Epoch is the
// asker's grant.
type SyncReq struct {
	Key   string
	Epoch uint64
	Want  uint64
}

// SyncResp answers a SyncReq: Current says whether the copy (Found, Rec)
// is current as of the asked epoch.
type SyncResp struct {
	Key     string
	Epoch   uint64
	Want    uint64
	Current bool
	Found   bool
	Rec     store.Record
}

func (*FeAcquire) Kind() string    { return "rc.fe_acquire" }
func (*FeRelease) Kind() string    { return "rc.fe_release" }
func (*Grant) Kind() string        { return "rc.grant" }
func (*Heartbeat) Kind() string    { return "rc.heartbeat" }
func (*HeartbeatAck) Kind() string { return "rc.heartbeat_ack" }
func (*SyncReq) Kind() string      { return "rc.sync" }
func (*SyncResp) Kind() string     { return "rc.sync_resp" }

// MessageTypes lists the protocol's messages for the network codec.
func MessageTypes() []wire.MsgType {
	return append([]wire.MsgType{
		{Kind: "rc.fe_acquire", New: func() wire.Encodable { return new(FeAcquire) }},
		{Kind: "rc.fe_release", New: func() wire.Encodable { return new(FeRelease) }},
		{Kind: "rc.grant", New: func() wire.Encodable { return new(Grant) }},
		{Kind: "rc.heartbeat", New: func() wire.Encodable { return new(Heartbeat) }},
		{Kind: "rc.heartbeat_ack", New: func() wire.Encodable { return new(HeartbeatAck) }},
		{Kind: "rc.sync", New: func() wire.Encodable { return new(SyncReq) }},
		{Kind: "rc.sync_resp", New: func() wire.Encodable { return new(SyncResp) }},
	}, append(dirgroup.MessageTypes(), rsm.MessageTypes()...)...)
}

// maxList bounds decoded lists: a corrupt length cannot allocate without
// limit.
const maxList = 1 << 16

func listLen(d *wire.Decoder) int {
	n := d.Uvarint()
	if n > maxList {
		d.Fail(fmt.Errorf("rc: list of %d entries", n))
		return 0
	}
	return int(n)
}

func appendSources(b []byte, ss []source) []byte {
	b = wire.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = wire.AppendUvarint(wire.AppendUvarint(b, uint64(s.FE)), s.Epoch)
	}
	return b
}

func decodeSources(d *wire.Decoder) []source {
	n := listLen(d)
	var out []source
	for i := 0; i < n && d.Err() == nil; i++ {
		out = append(out, source{FE: wire.NodeID(d.Uvarint()), Epoch: d.Uvarint()})
	}
	return out
}

func appendHolds(b []byte, hs []hold) []byte {
	b = wire.AppendUvarint(b, uint64(len(hs)))
	for _, h := range hs {
		b = wire.AppendUvarint(wire.AppendUvarint(wire.AppendString(b, h.Key), h.Nonce), h.Epoch)
		b = wire.AppendBool(wire.AppendBool(b, h.Current), h.Wanted)
	}
	return b
}

func decodeHolds(d *wire.Decoder) []hold {
	n := listLen(d)
	var out []hold
	for i := 0; i < n && d.Err() == nil; i++ {
		out = append(out, hold{Key: d.String(), Nonce: d.Uvarint(), Epoch: d.Uvarint(), Current: d.Bool(), Wanted: d.Bool()})
	}
	return out
}

func (m *FeAcquire) AppendPayload(b []byte) []byte {
	return wire.AppendVarint(wire.AppendUvarint(wire.AppendString(b, m.Key), m.Nonce), m.Sent)
}
func (m *FeAcquire) DecodePayload(d *wire.Decoder) {
	m.Key, m.Nonce, m.Sent = d.String(), d.Uvarint(), d.Varint()
}

func (m *FeRelease) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(wire.AppendUvarint(wire.AppendString(b, m.Key), m.Nonce), m.Epoch)
	return wire.AppendBool(b, m.Current)
}
func (m *FeRelease) DecodePayload(d *wire.Decoder) {
	m.Key, m.Nonce, m.Epoch, m.Current = d.String(), d.Uvarint(), d.Uvarint(), d.Bool()
}

func (m *Grant) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(wire.AppendUvarint(wire.AppendString(b, m.Key), m.Nonce), m.Epoch)
	return wire.AppendVarint(appendSources(b, m.Chain), m.Sent)
}
func (m *Grant) DecodePayload(d *wire.Decoder) {
	m.Key, m.Nonce, m.Epoch = d.String(), d.Uvarint(), d.Uvarint()
	m.Chain, m.Sent = decodeSources(d), d.Varint()
}

func (m *Heartbeat) AppendPayload(b []byte) []byte {
	return appendHolds(wire.AppendUvarint(b, m.Seq), m.Holds)
}
func (m *Heartbeat) DecodePayload(d *wire.Decoder) { m.Seq = d.Uvarint(); m.Holds = decodeHolds(d) }

func (m *HeartbeatAck) AppendPayload(b []byte) []byte {
	return appendHolds(wire.AppendUvarint(b, m.Seq), m.Holds)
}
func (m *HeartbeatAck) DecodePayload(d *wire.Decoder) { m.Seq = d.Uvarint(); m.Holds = decodeHolds(d) }

func (m *SyncReq) AppendPayload(b []byte) []byte {
	return wire.AppendUvarint(wire.AppendUvarint(wire.AppendString(b, m.Key), m.Epoch), m.Want)
}
func (m *SyncReq) DecodePayload(d *wire.Decoder) {
	m.Key, m.Epoch, m.Want = d.String(), d.Uvarint(), d.Uvarint()
}

func (m *SyncResp) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(wire.AppendUvarint(wire.AppendString(b, m.Key), m.Epoch), m.Want)
	b = wire.AppendBool(wire.AppendBool(b, m.Current), m.Found)
	return store.AppendWire(b, m.Rec)
}
func (m *SyncResp) DecodePayload(d *wire.Decoder) {
	m.Key, m.Epoch, m.Want = d.String(), d.Uvarint(), d.Uvarint()
	m.Current, m.Found, m.Rec = d.Bool(), d.Bool(), store.DecodeWire(d)
}
