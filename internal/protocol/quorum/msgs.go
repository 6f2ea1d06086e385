package quorum

import "github.com/lightcone/lightcone/internal/store"

// Mutate asks a replica to apply a version of a key (a write, or a read
// repair when Repair is set). Replicas keep the highest version: last writer
// wins.
type Mutate struct {
	Op     uint64 // coordinator's operation
	Key    string
	Rec    store.Record
	Repair bool
}

// MutateAck confirms a Mutate of Key is durable at the replica.
type MutateAck struct {
	Op  uint64
	Key string
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
