package meteor

import (
	"fmt"
	"slices"

	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// Write is MeteorShower's write notification, {Key, Update, Ts, Vn}
// (§4.2.3): the gateway sends it to every replica of Key, which adds Rec to
// its versions of Key unless its closure has passed Rec's timestamp
// (Fig. 4.14b, with multi-version storage in place of last writer wins).
type Write struct {
	Op  uint64
	Key string
	Rec store.Record
}

// WriteAck answers a Write once the replica has made Rec durable (Ack), or
// reports that it refused Rec (Rej) because the write arrived after the
// replica's closure had passed its timestamp: the replica has promised, in a
// status already sent, that it holds no version stamped that early that it
// does not already report (doc.go, "Closure"). Version names the write
// attempt answered.
type WriteAck struct {
	Op      uint64
	Key     string
	Rej     bool
	Version wire.Version
}

// ReadReq asks the nearest replica of Key to serve a read from its status
// map (Fig. 4.15a). ViewTs is T_read − θt on the gateway's clock: the read
// may use a peer's status only if its MsgTs is later (Fig. 4.14a).
type ReadReq struct {
	Op     uint64
	Key    string
	ViewTs int64
}

// ReadResp is the replica's answer to a ReadReq: the newest committed
// version of Key stamped at or before the view time, or TooOld if the view
// time is older than the versions the replica keeps (the gateway answers a
// retryable error).
type ReadResp struct {
	Op     uint64
	Key    string
	Found  bool
	Rec    store.Record
	TooOld bool
}

// Entry is one line of a status payload: a version of Key the sender has
// applied. It carries no value (§4.2.3: "without the value of the record to
// minimize the communication overhead").
type Entry struct {
	Key     string
	Version wire.Version
}

// Payload is the entries of one dispatch interval, numbered Seq and stamped
// with the sender's clock when it was first sent.
type Payload struct {
	Seq     uint64
	MsgTs   int64
	Entries []Entry
}

// Status is MeteorShower's status message {Payload, MsgTs, Seq, Redundant}
// (§4.2.3), sent to every peer every dispatch interval even when empty. Now
// is the current payload; Redundant repeats the previous ones, newest first,
// so a receiver can fill a gap left by lost statuses. Epoch names the
// sender's incarnation (the thesis prefixes Seq with the server ID; the
// sender is the message's source here, and the epoch tells incarnations
// apart). Genesis says the incarnation began with an empty history, so a
// receiver that has every payload from Seq 1 knows the sender's whole state.
type Status struct {
	Epoch     uint64
	Genesis   bool
	Now       Payload
	Redundant []Payload
}

// Pull asks a peer for the versions of Key it has applied: to learn the
// peer's state of Key when its status history has a gap (§4.2.4), and, if
// Want is set, to fetch that version's value for a read the local replica
// cannot serve from its own chain.
type Pull struct {
	Key  string
	Want wire.Version
}

// PullResp is the peer's answer: every version of Key it has applied
// (after its own compaction), with its epoch and the Seq of the last status
// it had sent, so every later version is in a later status; and the record
// of Want if it holds it.
type PullResp struct {
	Key      string
	Epoch    uint64
	Seq      uint64
	Versions []wire.Version
	Has      bool
	Rec      store.Record
	// Watermark is the peer's compaction watermark and Floor its
	// compaction floor for Key: Versions lists every version the peer
	// applied that is stamped above the watermark or newer than the floor
	// (or was known never to commit).
	Watermark int64
	Floor     wire.Version
}

// Kind implements wire.Msg.
func (*Write) Kind() string { return "meteor.write" }

// Kind implements wire.Msg: "meteor.ack" or "meteor.rej".
func (m *WriteAck) Kind() string {
	if m.Rej {
		return "meteor.rej"
	}
	return "meteor.ack"
}

// BaseKind is the kind WriteAck registers under with the codec.
func (*WriteAck) BaseKind() string { return "meteor.ack" }

// Kind implements wire.Msg.
func (*ReadReq) Kind() string { return "meteor.read" }

// Kind implements wire.Msg.
func (*ReadResp) Kind() string { return "meteor.read_resp" }

// Kind implements wire.Msg.
func (*Status) Kind() string { return "meteor.status" }

// Kind implements wire.Msg.
func (*Pull) Kind() string { return "meteor.pull" }

// Kind implements wire.Msg.
func (*PullResp) Kind() string { return "meteor.pull_resp" }

// MessageTypes lists the protocol's messages for the network codec.
func MessageTypes() []wire.MsgType {
	return []wire.MsgType{
		{Kind: "meteor.write", New: func() wire.Encodable { return new(Write) }},
		{Kind: "meteor.ack", New: func() wire.Encodable { return new(WriteAck) }},
		{Kind: "meteor.read", New: func() wire.Encodable { return new(ReadReq) }},
		{Kind: "meteor.read_resp", New: func() wire.Encodable { return new(ReadResp) }},
		{Kind: "meteor.status", New: func() wire.Encodable { return new(Status) }},
		{Kind: "meteor.pull", New: func() wire.Encodable { return new(Pull) }},
		{Kind: "meteor.pull_resp", New: func() wire.Encodable { return new(PullResp) }},
	}
}

// AppendPayload implements wire.Encodable.
func (m *Write) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, m.Op)
	b = wire.AppendString(b, m.Key)
	return store.AppendWire(b, m.Rec)
}

// DecodePayload implements wire.Encodable.
func (m *Write) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Rec = d.Uvarint(), d.String(), store.DecodeWire(d)
}

// AppendPayload implements wire.Encodable.
func (m *WriteAck) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, m.Op)
	b = wire.AppendString(b, m.Key)
	b = wire.AppendBool(b, m.Rej)
	return wire.AppendVersion(b, m.Version)
}

// DecodePayload implements wire.Encodable.
func (m *WriteAck) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Rej, m.Version = d.Uvarint(), d.String(), d.Bool(), d.Version()
}

// AppendPayload implements wire.Encodable.
func (m *ReadReq) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, m.Op)
	b = wire.AppendString(b, m.Key)
	return wire.AppendVarint(b, m.ViewTs)
}

// DecodePayload implements wire.Encodable.
func (m *ReadReq) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.ViewTs = d.Uvarint(), d.String(), d.Varint()
}

// AppendPayload implements wire.Encodable.
func (m *ReadResp) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, m.Op)
	b = wire.AppendString(b, m.Key)
	b = wire.AppendBool(b, m.Found)
	b = store.AppendWire(b, m.Rec)
	return wire.AppendBool(b, m.TooOld)
}

// DecodePayload implements wire.Encodable.
func (m *ReadResp) DecodePayload(d *wire.Decoder) {
	m.Op, m.Key, m.Found, m.Rec, m.TooOld = d.Uvarint(), d.String(), d.Bool(), store.DecodeWire(d), d.Bool()
}

// maxEntries bounds the entries of one decoded payload and the payloads of
// one status, so a corrupt length cannot make a decoder allocate without
// limit.
const (
	maxEntries  = 1 << 20
	maxPayloads = 65
)

func appendPayload(b []byte, p Payload) []byte {
	b = wire.AppendUvarint(b, p.Seq)
	b = wire.AppendVarint(b, p.MsgTs)
	b = wire.AppendUvarint(b, uint64(len(p.Entries)))
	for _, e := range p.Entries {
		b = wire.AppendString(b, e.Key)
		b = wire.AppendVersion(b, e.Version)
	}
	return b
}

// decodePayload decodes a payload, appending its entries to all; it
// returns the payload with no entries, and all.
func decodePayload(d *wire.Decoder, all []Entry) (Payload, []Entry) {
	p := Payload{Seq: d.Uvarint(), MsgTs: d.Varint()}
	n := d.Uvarint()
	if n > maxEntries || n > uint64(d.Len()) {
		d.Fail(fmt.Errorf("meteor: status payload of %d entries", n))
		return p, all
	}
	for range n {
		all = append(all, Entry{Key: d.String(), Version: d.Version()})
	}
	return p, all
}

// AppendPayload implements wire.Encodable.
func (m *Status) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, m.Epoch)
	b = wire.AppendBool(b, m.Genesis)
	b = appendPayload(b, m.Now)
	b = wire.AppendUvarint(b, uint64(len(m.Redundant)))
	for _, p := range m.Redundant {
		b = appendPayload(b, p)
	}
	return b
}

// DecodePayload implements wire.Encodable. The entries of all the
// payloads are decoded into one array, then sliced by payload: one
// allocation per status rather than one per payload that has entries.
func (m *Status) DecodePayload(d *wire.Decoder) {
	// Small on the stack (a status usually repeats 3 payloads, of a few
	// entries): the buffers are cleared on every call.
	var buf [8]Entry
	var endsBuf [8]int
	all := buf[:0]
	ends := endsBuf[:0] // where each payload's entries end in all
	m.Epoch, m.Genesis = d.Uvarint(), d.Bool()
	m.Now, all = decodePayload(d, all)
	ends = append(ends, len(all))
	n := d.Uvarint()
	if n > maxPayloads {
		d.Fail(fmt.Errorf("meteor: status with %d redundant payloads", n))
		return
	}
	if n > 0 {
		m.Redundant = make([]Payload, n)
	}
	for i := range m.Redundant {
		m.Redundant[i], all = decodePayload(d, all)
		ends = append(ends, len(all))
	}
	if len(all) == 0 {
		return
	}
	entries := slices.Clone(all)
	m.Now.Entries = cut(entries, 0, ends[0])
	for i := range m.Redundant {
		m.Redundant[i].Entries = cut(entries, ends[i], ends[i+1])
	}
}

// cut is entries[i:j], or nil if empty (as a payload without entries
// decodes).
func cut(entries []Entry, i, j int) []Entry {
	if i == j {
		return nil
	}
	return entries[i:j:j]
}

// AppendPayload implements wire.Encodable.
func (m *Pull) AppendPayload(b []byte) []byte {
	b = wire.AppendString(b, m.Key)
	return wire.AppendVersion(b, m.Want)
}

// DecodePayload implements wire.Encodable.
func (m *Pull) DecodePayload(d *wire.Decoder) { m.Key, m.Want = d.String(), d.Version() }

// AppendPayload implements wire.Encodable.
func (m *PullResp) AppendPayload(b []byte) []byte {
	b = wire.AppendString(b, m.Key)
	b = wire.AppendUvarint(b, m.Epoch)
	b = wire.AppendUvarint(b, m.Seq)
	b = wire.AppendUvarint(b, uint64(len(m.Versions)))
	for _, v := range m.Versions {
		b = wire.AppendVersion(b, v)
	}
	b = wire.AppendBool(b, m.Has)
	b = store.AppendWire(b, m.Rec)
	b = wire.AppendVarint(b, m.Watermark)
	return wire.AppendVersion(b, m.Floor)
}

// DecodePayload implements wire.Encodable.
func (m *PullResp) DecodePayload(d *wire.Decoder) {
	m.Key, m.Epoch, m.Seq = d.String(), d.Uvarint(), d.Uvarint()
	n := d.Uvarint()
	if n > maxChain || n > uint64(d.Len()) {
		d.Fail(fmt.Errorf("meteor: pull answer with %d versions", n))
		return
	}
	if n > 0 {
		m.Versions = make([]wire.Version, n)
	}
	for i := range m.Versions {
		m.Versions[i] = d.Version()
	}
	m.Has, m.Rec, m.Watermark, m.Floor = d.Bool(), store.DecodeWire(d), d.Varint(), d.Version()
}
