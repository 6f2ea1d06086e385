// Package wire holds the identifiers and messages shared by protocols and
// runtimes: node and client identities, client requests and replies, and the
// interface every protocol message implements.
package wire

import (
	"fmt"

	"github.com/lightcone/lightcone/internal/hlc"
)

// NodeID identifies a node: its index in the topology's node list.
type NodeID int32

// ClientID identifies a client session. A runtime routes a Reply to the
// client whose ID it carries.
type ClientID int64

// RequestID identifies one request of one client.
type RequestID uint64

// Msg is a protocol message between nodes. Kind names the message type for
// traces and message counts ("quorum.mutate").
type Msg interface {
	Kind() string
}

// Version orders the values of one key: last writer wins. Node breaks ties
// between equal timestamps issued by different coordinators.
type Version struct {
	TS   hlc.Timestamp
	Node NodeID
}

// Less reports whether v orders before u.
func (v Version) Less(u Version) bool {
	if v.TS != u.TS {
		return v.TS.Less(u.TS)
	}
	return v.Node < u.Node
}

// IsZero reports whether v is the zero version (no write).
func (v Version) IsZero() bool { return v == Version{} }

// Compare returns -1, 0 or +1 as v is older than, equal to or newer than u.
func (v Version) Compare(u Version) int {
	switch {
	case v.Less(u):
		return -1
	case u.Less(v):
		return 1
	}
	return 0
}

func (v Version) String() string { return fmt.Sprintf("%s@n%d", v.TS, v.Node) }

// serviceBase is the first NodeID reserved for storage services: region r's
// service is serviceBase+r. Topologies number their nodes from 0 and are
// far smaller, so the ranges never meet.
const serviceBase NodeID = 1 << 30

// StorageService is the address of region's storage service
// (internal/storagesvc): a protocol sends it requests with env.Env.Send and
// its answers arrive as messages from this address. Both runtimes route it
// (the simulator to its modelled service, the server to the region's
// configured backend); it is not a node of the topology.
func StorageService(region int) NodeID { return serviceBase + NodeID(region) }

// StorageRegion reports whether id is a storage service's address, and
// whose region's.
func (id NodeID) StorageRegion() (region int, ok bool) {
	if id < serviceBase {
		return 0, false
	}
	return int(id - serviceBase), true
}

// Wrapper is a message carrying another one on its way between nodes (the
// keyspace envelope). A runtime routing a request to a storage service
// unwraps it to find the request and wraps the answer the same way, so it
// reaches the keyspace that asked.
type Wrapper interface {
	Msg
	// Inner is the carried message.
	Inner() Msg
	// Rewrap returns a wrapper like this one carrying m instead.
	Rewrap(m Msg) Msg
}
