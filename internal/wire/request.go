package wire

import (
	"fmt"
	"strings"
)

// Op is a client operation.
type Op uint8

const (
	OpGet Op = iota + 1
	OpPut
	OpDelete
	// OpMigrate asks the keyspace to move Key's write mastership to the
	// region named by Value (protocols with per-key masters; others answer
	// ErrInvalid).
	OpMigrate
	// OpAcquire asks for Key's hold (release consistency, protocol rc): the
	// client may read and write Key until it sends OpRelease. Protocols
	// without holds answer ErrInvalid.
	OpAcquire
	// OpRelease gives back a hold taken with OpAcquire.
	OpRelease
	// OpTxn is a transaction: its declared operations in Request.Txn, its
	// results in Reply.Txn (txn.go). Protocols without transactions
	// answer ErrInvalid.
	OpTxn
)

func (o Op) String() string {
	switch o {
	case OpGet:
		return "get"
	case OpPut:
		return "put"
	case OpDelete:
		return "delete"
	case OpMigrate:
		return "migrate"
	case OpAcquire:
		return "acquire"
	case OpRelease:
		return "release"
	case OpTxn:
		return "txn"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Level is a per-request consistency level in Cassandra's vocabulary. Each
// protocol documents which levels it honours and what each guarantees.
type Level uint8

const (
	LevelDefault Level = iota // the keyspace's configured level
	One
	Two
	Three
	Quorum
	LocalOne
	LocalQuorum
	EachQuorum
	All
)

var levelNames = [...]string{"DEFAULT", "ONE", "TWO", "THREE", "QUORUM", "LOCAL_ONE", "LOCAL_QUORUM", "EACH_QUORUM", "ALL"}

// Levels lists every concrete level (not LevelDefault) in declaration order.
func Levels() []Level {
	return []Level{One, Two, Three, Quorum, LocalOne, LocalQuorum, EachQuorum, All}
}

func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("LEVEL(%d)", uint8(l))
}

// ParseLevel parses a level name, case-insensitively; "-" and "_" are equal.
func ParseLevel(s string) (Level, error) {
	n := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", "_"))
	for _, l := range Levels() {
		if levelNames[l] == n {
			return l, nil
		}
	}
	names := make([]string, 0, len(levelNames)-1)
	for _, l := range Levels() {
		names = append(names, l.String())
	}
	return 0, fmt.Errorf("unknown consistency level %q (valid: %s)", s, strings.Join(names, ", "))
}

// Request is a client request as a gateway node receives it.
type Request struct {
	ID       RequestID
	Client   ClientID
	Keyspace string
	Op       Op
	Key      string
	Value    []byte // for OpPut
	Level    Level  // consistency level of this request; LevelDefault: the keyspace's
	// Update chooses a write's update mode where the protocol has them
	// (GlobLease's active and passive updates); other protocols ignore it.
	Update UpdateMode
	// Cond makes a put or delete conditional (compare-and-set): it applies
	// only if Key's current version is Expected, checked atomically with
	// the write; the zero Expected means "absent or deleted" (no value, or
	// a tombstone of any version). Otherwise it takes no effect and fails
	// with ErrConflict, the Reply's Version being the current one. Only
	// protocols that order each key's writes apply it; the others refuse
	// it with ErrInvalid (protocol.CondRefusal names the ones that can).
	Cond     bool
	Expected Version
	// Txn is an OpTxn's operations (Key is empty).
	Txn *Txn
}

// Holds reports whether a conditional write expecting e may apply to a key
// whose current record has version cur (found: the key has a record;
// tombstone: that record is a delete): cur is e, or e is zero and the key
// has no value. Protocols that apply conditional writes call it where they
// order the key's writes.
func (e Version) Holds(cur Version, found, tombstone bool) bool {
	if e.IsZero() {
		return !found || tombstone
	}
	return found && cur == e
}

// UpdateMode is a write's update mode (GlobLease Alg. 2: active or
// passive update, separate request options).
type UpdateMode uint8

const (
	UpdateDefault UpdateMode = iota // the keyspace's configured mode
	UpdateActive                    // update a majority and every lease holder before answering
	UpdatePassive                   // answer from the master alone when no lease is valid
)

func (m UpdateMode) String() string {
	switch m {
	case UpdateActive:
		return "ACTIVE"
	case UpdatePassive:
		return "PASSIVE"
	}
	return "DEFAULT"
}

// ParseUpdateMode parses ACTIVE, PASSIVE or DEFAULT, in any case.
func ParseUpdateMode(s string) (UpdateMode, error) {
	for _, m := range []UpdateMode{UpdateDefault, UpdateActive, UpdatePassive} {
		if strings.EqualFold(s, m.String()) {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unknown update mode %q (valid: ACTIVE, PASSIVE, DEFAULT)", s)
}

// Reply answers one Request.
type Reply struct {
	ID      RequestID
	Client  ClientID
	Found   bool    // for OpGet: the key holds a value
	Value   []byte  // for OpGet
	Version Version // the version read or written; with ErrConflict, the key's current one
	Err     *Error  // nil on success
	// ReadAt, for OpGet, is the time at which the protocol's total order
	// places the read, if it has one (meteor: the read's view time; it
	// returned the newest write stamped at or before it). Zero otherwise.
	// Checkers use it as a hint; clients may ignore it.
	ReadAt int64
	// Txn, for a committed OpTxn, is one result per operation, in order.
	Txn []TxnResult
}

// ErrorCode classifies a failed request. The class tells a client whether the
// operation may have taken effect.
type ErrorCode uint8

const (
	// ErrUnavailable: the request was refused before it took effect anywhere.
	ErrUnavailable ErrorCode = iota + 1
	// ErrTimeout: the outcome is unknown; a write may or may not have been
	// applied and may still become visible later.
	ErrTimeout
	// ErrInvalid: the request was malformed or not allowed by the keyspace's
	// policy; it took no effect.
	ErrInvalid
	// ErrNoSpace: a write refused before it took effect because the node's
	// disk is (nearly) full. Retryable: the node takes writes again on its
	// own once space is freed; reads are still served.
	ErrNoSpace
	// ErrConflict: a conditional write (Request.Cond) whose expected
	// version was not the key's current one; it took no effect. The
	// Reply's Version is the current version (zero: absent or deleted).
	// Read again and retry.
	ErrConflict
)

func (c ErrorCode) String() string {
	switch c {
	case ErrUnavailable:
		return "unavailable"
	case ErrTimeout:
		return "timeout"
	case ErrInvalid:
		return "invalid"
	case ErrNoSpace:
		return "no_space"
	case ErrConflict:
		return "conflict"
	}
	return fmt.Sprintf("error(%d)", uint8(c))
}

// Error is a typed request error.
type Error struct {
	Code ErrorCode
	Msg  string
}

func (e *Error) Error() string { return e.Code.String() + ": " + e.Msg }

// OutcomeUnknown reports whether a write that failed with e may still have
// taken effect.
func (e *Error) OutcomeUnknown() bool { return e != nil && e.Code == ErrTimeout }

// MarshalText writes the level's name (configuration files).
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText parses a level name as ParseLevel does (configuration
// files; "" is LevelDefault).
func (l *Level) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*l = LevelDefault
		return nil
	}
	v, err := ParseLevel(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}
