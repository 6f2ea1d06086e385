// Package wire holds the identifiers and messages shared by protocols and
// runtimes: node and client identities, client requests and replies, and the
// interface every protocol message implements.
package wire

import (
	"fmt"
	"strconv"
	"strings"

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

// ParseVersion parses a version as String writes it
// ("<wall>.<logical>@n<node>"); "0" is the zero version.
func ParseVersion(s string) (Version, error) {
	if s == "0" {
		return Version{}, nil
	}
	bad := fmt.Errorf("version %q: want <wall>.<logical>@n<node>, as reads reply it, or 0", s)
	ts, node, ok := strings.Cut(s, "@n")
	wall, logical, ok2 := strings.Cut(ts, ".")
	if !ok || !ok2 {
		return Version{}, bad
	}
	w, err1 := strconv.ParseInt(wall, 10, 64)
	l, err2 := strconv.ParseUint(logical, 10, 32)
	n, err3 := strconv.ParseInt(node, 10, 32)
	if err1 != nil || err2 != nil || err3 != nil {
		return Version{}, bad
	}
	return Version{TS: hlc.Timestamp{WallNanos: w, Logical: uint32(l)}, Node: NodeID(n)}, nil
}

// serviceBase is the first NodeID reserved for storage services: replica i
// of region r's service is serviceBase + i<<serviceReplicaShift + r.
// Topologies number their nodes from 0 and are far smaller, so the ranges
// never meet.
const serviceBase NodeID = 1 << 30

// serviceReplicaShift places a service replica's index above its region's.
const serviceReplicaShift = 16

// MaxStorageReplicas bounds the replicas a region's storage service may be
// addressed as (StorageReplica), and MaxStorageRegions the regions.
const (
	MaxStorageReplicas = 64
	MaxStorageRegions  = 1 << serviceReplicaShift
)

// StorageService is the address of region's storage service
// (internal/storagesvc): a protocol sends it requests with env.Env.Send and
// its answers arrive as messages from this address. Both runtimes route it
// (the simulator to its modelled service, the server to the region's
// configured backend); it is not a node of the topology. It is replica 0
// of the region's service (StorageReplica).
func StorageService(region int) NodeID { return StorageReplica(region, 0) }

// StorageReplica is the address of replica i of region's storage service:
// an independent object store in the same region (its own objects, ETags
// and service times), for protocols that keep several copies of an object
// in one region (CRIC's hierarchical quorums, seed 001 §5.3). Replica 0 is
// StorageService(region). It panics outside 0 ≤ region < MaxStorageRegions,
// 0 ≤ i < MaxStorageReplicas.
func StorageReplica(region, i int) NodeID {
	if region < 0 || region >= MaxStorageRegions || i < 0 || i >= MaxStorageReplicas {
		panic(fmt.Sprintf("wire: storage replica %d of region %d out of range", i, region))
	}
	return serviceBase + NodeID(i)<<serviceReplicaShift + NodeID(region)
}

// StorageRegion reports whether id is a storage service's address (any
// replica), and whose region's.
func (id NodeID) StorageRegion() (region int, ok bool) {
	region, _, ok = id.StorageReplicaOf()
	return region, ok
}

// StorageReplicaOf reports whether id is a storage service's address, and
// which region's and which replica.
func (id NodeID) StorageReplicaOf() (region, replica int, ok bool) {
	if id < serviceBase {
		return 0, 0, false
	}
	off := id - serviceBase
	return int(off & (MaxStorageRegions - 1)), int(off >> serviceReplicaShift), true
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
