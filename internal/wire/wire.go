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
