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
