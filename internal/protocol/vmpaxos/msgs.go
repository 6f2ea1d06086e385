package vmpaxos

import (
	"github.com/lightcone/lightcone/internal/protocol/cric"
	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/wire"
)

// Op is what a Request asks of an acceptor process.
type Op uint8

const (
	// OpRead asks for the acceptor's state and value (ModeLogic) or its
	// whole log (ModeLog).
	OpRead Op = iota + 1
	// OpPrepare is a promise of ballot B for version N.
	OpPrepare
	// OpAccept is an accept of value W (Data, Del) for version N in
	// ballot B.
	OpAccept
	// OpCommit sets the commit bit of version N's value W (no answer).
	OpCommit
)

// Request is a proposer's request to an acceptor process. In ModeLog the
// process appends every Request but a read to the object's log as a
// record, without looking at it; ID then names the record.
type Request struct {
	ID   uint64
	Key  string
	Op   Op
	N    uint64
	B    cric.Ballot
	W    string
	Del  bool
	Data []byte
}

// Response is an acceptor process's answer.
type Response struct {
	ID uint64
	// OK: ModeLogic, the acceptor promised or accepted; ModeLog, the
	// record was appended.
	OK bool
	// State is the acceptor's state after the request (ModeLogic), in
	// cric's metadata encoding; Data the value of its version State.V when
	// the proposer may need it (reads, promises for a version it has
	// accepted).
	State storagesvc.Meta
	Data  []byte
	// Log is the object's log (ModeLog reads).
	Log []Request
}

// Kind implements wire.Msg.
func (*Request) Kind() string { return "vmpaxos.request" }

// Kind implements wire.Msg.
func (*Response) Kind() string { return "vmpaxos.response" }

// MessageTypes lists the messages for the network codec.
func MessageTypes() []wire.MsgType {
	return []wire.MsgType{
		{Kind: "vmpaxos.request", New: func() wire.Encodable { return new(Request) }},
		{Kind: "vmpaxos.response", New: func() wire.Encodable { return new(Response) }},
	}
}

// AppendPayload implements wire.Encodable.
func (m *Request) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, m.ID)
	b = wire.AppendString(b, m.Key)
	b = wire.AppendUvarint(b, uint64(m.Op))
	b = wire.AppendUvarint(b, m.N)
	b = wire.AppendUvarint(b, m.B.Round)
	b = wire.AppendUvarint(b, uint64(m.B.Node))
	b = wire.AppendUvarint(b, m.B.Nonce)
	b = wire.AppendString(b, m.W)
	b = wire.AppendBool(b, m.Del)
	return wire.AppendBytes(b, m.Data)
}

// DecodePayload implements wire.Encodable.
func (m *Request) DecodePayload(d *wire.Decoder) {
	m.ID, m.Key, m.Op, m.N = d.Uvarint(), d.String(), Op(d.Uvarint()), d.Uvarint()
	m.B = cric.Ballot{Round: d.Uvarint(), Node: uint32(d.Uvarint()), Nonce: d.Uvarint()}
	m.W, m.Del, m.Data = d.String(), d.Bool(), d.Bytes()
}

// AppendPayload implements wire.Encodable.
func (m *Response) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, m.ID)
	b = wire.AppendBool(b, m.OK)
	b = storagesvc.AppendMeta(b, m.State)
	b = wire.AppendBytes(b, m.Data)
	b = wire.AppendUvarint(b, uint64(len(m.Log)))
	for i := range m.Log {
		b = m.Log[i].AppendPayload(b)
	}
	return b
}

// DecodePayload implements wire.Encodable.
func (m *Response) DecodePayload(d *wire.Decoder) {
	m.ID, m.OK, m.State, m.Data = d.Uvarint(), d.Bool(), storagesvc.DecodeMeta(d), d.Bytes()
	n := d.Uvarint()
	if n > maxLogRecords {
		d.Fail(errLogTooLong)
		return
	}
	m.Log = nil
	for range n {
		var r Request
		r.DecodePayload(d)
		m.Log = append(m.Log, r)
	}
}
