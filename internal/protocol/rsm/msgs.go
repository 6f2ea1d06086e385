package rsm

import (
	"strings"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/lightcone/lightcone/internal/wire"
)

// Msg carries one raft message of a group between its members. Data is
// the raft message in its protobuf encoding (raftpb.Message); Type repeats
// its type so the simulator and metrics can count messages by kind without
// decoding them. A member decodes Data when it steps the message and drops
// what does not decode.
type Msg struct {
	Group string // Config.Group
	Type  pb.MessageType
	Data  []byte
}

// kindPrefix is the prefix of every rsm message kind.
const kindPrefix = "rsm."

// baseKind is the kind Msg registers under with the codec.
const baseKind = kindPrefix + "raft"

// kinds names each raft message type: "rsm.app", "rsm.vote", ...
var kinds = func() map[pb.MessageType]string {
	m := map[pb.MessageType]string{}
	for v := range int32(64) {
		if name, ok := pb.MessageType_name[v]; ok {
			m[pb.MessageType(v)] = kindPrefix + strings.ToLower(strings.TrimPrefix(name, "Msg"))
		}
	}
	return m
}()

// Kind implements wire.Msg: the raft message type ("rsm.app", "rsm.heartbeat", ...).
func (m *Msg) Kind() string {
	if k, ok := kinds[m.Type]; ok {
		return k
	}
	return baseKind
}

// BaseKind is the kind Msg registers under with the codec.
func (*Msg) BaseKind() string { return baseKind }

// MessageTypes lists the messages of a group for the network codec. A
// protocol that embeds a Group appends them to its own
// (protocol.Definition.MessageTypes).
func MessageTypes() []wire.MsgType {
	return []wire.MsgType{{Kind: baseKind, New: func() wire.Encodable { return new(Msg) }}}
}

// AppendPayload implements wire.Encodable.
func (m *Msg) AppendPayload(b []byte) []byte {
	b = wire.AppendString(b, m.Group)
	b = wire.AppendVarint(b, int64(m.Type))
	return wire.AppendBytes(b, m.Data)
}

// DecodePayload implements wire.Encodable.
func (m *Msg) DecodePayload(d *wire.Decoder) {
	m.Group = d.String()
	m.Type = pb.MessageType(d.Varint())
	m.Data = d.Bytes()
}
