package dirsc

import (
	"fmt"

	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/protocol/rsm"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// State is a row's coherence state, at a frontend or the directory
// (seed 002 §4.2.1, A.3): Invalid, Shared or Modified. The directory's
// fourth state, Processing, is not stored: it is the directory's in-memory
// record of the request it is working on (directory.go).
type State uint8

const (
	Invalid State = iota
	Shared
	Modified
)

func (s State) String() string {
	switch s {
	case Shared:
		return "S"
	case Modified:
		return "M"
	}
	return "I"
}

// rowData is a frontend's copy of a row: the epoch of the Modified grant
// under which it was last written (0: never written), and its record
// (Found false: absent; a Tombstone: deleted). Its version is
// (epoch, write sequence, writer).
type rowData struct {
	Epoch uint64
	Found bool
	Rec   store.Record
}

func appendData(b []byte, d rowData) []byte {
	b = wire.AppendUvarint(b, d.Epoch)
	b = wire.AppendBool(b, d.Found)
	return store.AppendWire(b, d.Rec)
}

func decodeData(d *wire.Decoder) rowData {
	return rowData{Epoch: d.Uvarint(), Found: d.Bool(), Rec: store.DecodeWire(d)}
}

func appendNodes(b []byte, ns []wire.NodeID) []byte {
	b = wire.AppendUvarint(b, uint64(len(ns)))
	for _, n := range ns {
		b = wire.AppendVarint(b, int64(n))
	}
	return b
}

func decodeNodes(d *wire.Decoder) []wire.NodeID {
	n := d.Uvarint()
	if n > uint64(d.Len()) {
		d.Fail(wire.ErrTruncated)
		return nil
	}
	var out []wire.NodeID
	for i := uint64(0); i < n; i++ {
		out = append(out, wire.NodeID(d.Varint()))
	}
	return out
}

// Request is a frontend's request(Row, S|M) to the directory (Alg. 4.1
// line 7). Nonce names this send; the grant or busy answer echoes it.
type Request struct {
	Key   string
	Want  State
	Nonce uint64
}

// Busy is the directory's failure answer while the row is Processing
// another request (Alg. 4.2 line 6): retry after a backoff.
type Busy struct {
	Key   string
	Nonce uint64
}

// Grant answers a Request: the frontend may take Want under Epoch. The row's
// current data is that of DataEpoch; Sources hold it (the first ones
// confirmed, the rest possibly). A frontend whose copy is of DataEpoch
// needs no sync (Alg. 4.1 lines 10–13, "choose r somehow").
type Grant struct {
	Key       string
	Want      State
	Nonce     uint64
	Epoch     uint64
	DataEpoch uint64
	Sources   []wire.NodeID
}

// Inval tells a frontend to drop its row to To (Shared or Invalid), fencing
// every grant of an epoch up to Epoch (Alg. 4.2 lines 11, 19).
type Inval struct {
	Key   string
	To    State
	Epoch uint64
}

// InvalAck acknowledges an Inval once the new state is durable; DataEpoch
// is the epoch of the data the frontend holds, and Kept says it is now
// Shared (a downgraded owner).
type InvalAck struct {
	Key       string
	Epoch     uint64
	DataEpoch uint64
	Kept      bool
}

// Sync asks a frontend for its copy of a row (Alg. 4.1 line 11).
type Sync struct {
	Key   string
	Nonce uint64
}

// SyncResp is a frontend's copy of the whole row.
type SyncResp struct {
	Key   string
	Nonce uint64
	Data  rowData
}

// Kind implements wire.Msg.
func (*Request) Kind() string { return "sc.request" }

// Kind implements wire.Msg.
func (*Busy) Kind() string { return "sc.busy" }

// Kind implements wire.Msg.
func (*Grant) Kind() string { return "sc.grant" }

// Kind implements wire.Msg.
func (*Inval) Kind() string { return "sc.inval" }

// Kind implements wire.Msg.
func (*InvalAck) Kind() string { return "sc.inval_ack" }

// Kind implements wire.Msg.
func (*Sync) Kind() string { return "sc.sync" }

// Kind implements wire.Msg.
func (*SyncResp) Kind() string { return "sc.sync_resp" }

// MessageTypes lists the protocol's messages for the network codec.
func MessageTypes() []wire.MsgType {
	return append([]wire.MsgType{
		{Kind: "sc.request", New: func() wire.Encodable { return new(Request) }},
		{Kind: "sc.busy", New: func() wire.Encodable { return new(Busy) }},
		{Kind: "sc.grant", New: func() wire.Encodable { return new(Grant) }},
		{Kind: "sc.inval", New: func() wire.Encodable { return new(Inval) }},
		{Kind: "sc.inval_ack", New: func() wire.Encodable { return new(InvalAck) }},
		{Kind: "sc.sync", New: func() wire.Encodable { return new(Sync) }},
		{Kind: "sc.sync_resp", New: func() wire.Encodable { return new(SyncResp) }},
	}, append(dirgroup.MessageTypes(), rsm.MessageTypes()...)...)
}

// AppendPayload implements wire.Encodable.
func (m *Request) AppendPayload(b []byte) []byte {
	b = wire.AppendString(b, m.Key)
	return wire.AppendUvarint(wire.AppendUvarint(b, uint64(m.Want)), m.Nonce)
}

// DecodePayload implements wire.Encodable.
func (m *Request) DecodePayload(d *wire.Decoder) {
	m.Key, m.Want, m.Nonce = d.String(), decodeState(d), d.Uvarint()
}

// AppendPayload implements wire.Encodable.
func (m *Busy) AppendPayload(b []byte) []byte {
	return wire.AppendUvarint(wire.AppendString(b, m.Key), m.Nonce)
}

// DecodePayload implements wire.Encodable.
func (m *Busy) DecodePayload(d *wire.Decoder) { m.Key, m.Nonce = d.String(), d.Uvarint() }

// AppendPayload implements wire.Encodable.
func (m *Grant) AppendPayload(b []byte) []byte {
	b = wire.AppendString(b, m.Key)
	b = wire.AppendUvarint(b, uint64(m.Want))
	b = wire.AppendUvarint(b, m.Nonce)
	b = wire.AppendUvarint(b, m.Epoch)
	b = wire.AppendUvarint(b, m.DataEpoch)
	return appendNodes(b, m.Sources)
}

// DecodePayload implements wire.Encodable.
func (m *Grant) DecodePayload(d *wire.Decoder) {
	m.Key, m.Want, m.Nonce, m.Epoch, m.DataEpoch = d.String(), decodeState(d), d.Uvarint(), d.Uvarint(), d.Uvarint()
	m.Sources = decodeNodes(d)
}

// AppendPayload implements wire.Encodable.
func (m *Inval) AppendPayload(b []byte) []byte {
	b = wire.AppendString(b, m.Key)
	return wire.AppendUvarint(wire.AppendUvarint(b, uint64(m.To)), m.Epoch)
}

// DecodePayload implements wire.Encodable.
func (m *Inval) DecodePayload(d *wire.Decoder) {
	m.Key, m.To, m.Epoch = d.String(), decodeState(d), d.Uvarint()
}

// AppendPayload implements wire.Encodable.
func (m *InvalAck) AppendPayload(b []byte) []byte {
	b = wire.AppendString(b, m.Key)
	b = wire.AppendUvarint(b, m.Epoch)
	b = wire.AppendUvarint(b, m.DataEpoch)
	return wire.AppendBool(b, m.Kept)
}

// DecodePayload implements wire.Encodable.
func (m *InvalAck) DecodePayload(d *wire.Decoder) {
	m.Key, m.Epoch, m.DataEpoch, m.Kept = d.String(), d.Uvarint(), d.Uvarint(), d.Bool()
}

// AppendPayload implements wire.Encodable.
func (m *Sync) AppendPayload(b []byte) []byte {
	return wire.AppendUvarint(wire.AppendString(b, m.Key), m.Nonce)
}

// DecodePayload implements wire.Encodable.
func (m *Sync) DecodePayload(d *wire.Decoder) { m.Key, m.Nonce = d.String(), d.Uvarint() }

// AppendPayload implements wire.Encodable.
func (m *SyncResp) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(wire.AppendString(b, m.Key), m.Nonce)
	return appendData(b, m.Data)
}

// DecodePayload implements wire.Encodable.
func (m *SyncResp) DecodePayload(d *wire.Decoder) {
	m.Key, m.Nonce, m.Data = d.String(), d.Uvarint(), decodeData(d)
}

func decodeState(d *wire.Decoder) State {
	s := d.Uvarint()
	if s > 255 {
		d.Fail(fmt.Errorf("sc: state %d out of range", s))
	}
	return State(s)
}
