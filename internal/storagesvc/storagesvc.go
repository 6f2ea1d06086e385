package storagesvc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Limits every implementation enforces, so that a protocol tested on the
// reference service cannot rely on more than S3 gives. A request beyond one
// fails with ErrInvalid and changes nothing.
const (
	// MaxKeyBytes bounds an object key (S3's limit).
	MaxKeyBytes = 1024
	// MaxMetaBytes bounds an object's metadata as MetaSize counts it
	// (Azure blob metadata's limit, which CRIC's Paxos state was sized
	// for; S3 user metadata allows only 2 KiB, which is why the S3
	// adapter keeps metadata in the object body, see s3svc).
	MaxMetaBytes = 8 << 10
	// MaxDataBytes bounds an object's data. Protocols on this layer store
	// small objects (CRIC targets < 1 KB); large values belong in a
	// multipart upload this layer does not offer.
	MaxDataBytes = 16 << 20
	// MaxListLimit bounds a List page (S3's ListObjectsV2 max-keys).
	MaxListLimit = 1000
)

// Meta is an object's user metadata: names to values, both arbitrary
// strings (binary values are fine). It is written with the data (Put) or
// alone (PutMeta) and read by Get and Head. A nil and an empty Meta are
// equal.
type Meta map[string]string

// MetaSize is the size Meta counts against MaxMetaBytes: the bytes of its
// names and values.
func MetaSize(m Meta) int {
	n := 0
	for k, v := range m { // lint:order-independent: a sum
		n += len(k) + len(v)
	}
	return n
}

// Clone returns a copy of m (nil for an empty m).
func (m Meta) Clone() Meta {
	if len(m) == 0 {
		return nil
	}
	out := make(Meta, len(m))
	for k, v := range m { // lint:order-independent: a copy
		out[k] = v
	}
	return out
}

// Names returns m's names, sorted.
func (m Meta) Names() []string {
	out := make([]string, 0, len(m))
	for k := range m { // lint:order-independent: sorted below
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Equal reports whether m and o hold the same names and values.
func (m Meta) Equal(o Meta) bool {
	if len(m) != len(o) {
		return false
	}
	for k, v := range m { // lint:order-independent: all must match
		if w, ok := o[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// ETag identifies one state of one object: the data and metadata a
// successful Put or PutMeta left. Every successful Put and PutMeta gives
// the object a new ETag, even one that writes the same bytes again, and an
// ETag is never given to another state of the same key (nor, in practice,
// of any key): so an If-Match write succeeds only if nothing at all — data
// or metadata — was written to the object since its ETag was read. That is
// what lets a protocol compare-and-swap an object's metadata alone (CRIC's
// Paxos state) without rewriting its data. ETags are opaque: compare them
// for equality, never parse them. The empty ETag names no state.
type ETag string

// Cond is a write's precondition. The zero Cond is unconditional.
type Cond struct {
	// IfMatch, if set, lets the write happen only if the object exists and
	// its current ETag is IfMatch (HTTP If-Match).
	IfMatch ETag
	// IfNoneMatch lets the write happen only if the object does not exist
	// (HTTP If-None-Match: *): create-only.
	IfNoneMatch bool
}

// IsZero reports whether c is unconditional.
func (c Cond) IsZero() bool { return c == Cond{} }

func (c Cond) String() string {
	switch {
	case c.IfMatch != "" && c.IfNoneMatch:
		return fmt.Sprintf("if-match %s and if-none-match *", c.IfMatch)
	case c.IfMatch != "":
		return "if-match " + string(c.IfMatch)
	case c.IfNoneMatch:
		return "if-none-match *"
	}
	return "unconditional"
}

// Object is an object read by Get (data, metadata, ETag) or Head
// (metadata and ETag; Data nil, Size the data's length).
type Object struct {
	Key  string
	Data []byte
	Meta Meta
	ETag ETag
	Size int64 // len(Data) for Get; the stored data's length for Head
}

// Entry is one object in a List page. It has no size: an S3 listing gives
// only the stored body's, which is not the data's (s3svc keeps metadata in
// the body); Head gives the data's.
type Entry struct {
	Key  string
	ETag ETag
}

// ListResult is one page of a List.
type ListResult struct {
	// Entries are the page's objects in ascending byte order of key.
	Entries []Entry
	// Truncated says more keys follow: list again with StartAfter the last
	// entry's key.
	Truncated bool
}

// Errors. Implementations return them, possibly wrapped with detail, so
// callers test with errors.Is.
var (
	// ErrNotFound: Get, Head or an unconditional PutMeta found no object.
	ErrNotFound = errors.New("storagesvc: no such object")
	// ErrPreconditionFailed: a write's Cond did not hold (If-Match and the
	// object is absent or has another ETag; If-None-Match and it exists).
	// Nothing was written.
	ErrPreconditionFailed = errors.New("storagesvc: precondition failed")
	// ErrUnavailable: no answer, or an error answer that does not say the
	// request failed (a timeout, a connection reset, a 5xx). The outcome
	// is unknown: a write may or may not have taken effect, now or later.
	ErrUnavailable = errors.New("storagesvc: unavailable; outcome unknown")
	// ErrInvalid: the request breaks a limit or is malformed; nothing was
	// done.
	ErrInvalid = errors.New("storagesvc: invalid request")
)

// Service is one region's storage service as the runtime calls it: every
// method is one request, and implementations are safe for concurrent use
// unless they say otherwise. Protocols never call it; they send a Request
// to the service's address (ServiceAddr) and get a Response, and the
// runtime calls Exec. doc.go states the semantics every implementation
// gives; the conformance suite (internal/svctest) checks them.
type Service interface {
	// Get returns the object's data, metadata and ETag, or ErrNotFound.
	Get(ctx context.Context, key string) (*Object, error)
	// Head returns the object's metadata, ETag and size without its data,
	// or ErrNotFound.
	Head(ctx context.Context, key string) (*Object, error)
	// Put replaces the object's data and metadata if cond holds, and
	// returns its new ETag.
	Put(ctx context.Context, key string, data []byte, meta Meta, cond Cond) (ETag, error)
	// PutMeta replaces the object's metadata, keeping its data, if the
	// object exists and cond holds, and returns its new ETag. An absent
	// object is ErrNotFound when cond is zero, ErrPreconditionFailed under
	// If-Match; If-None-Match is invalid (PutMeta never creates).
	PutMeta(ctx context.Context, key string, meta Meta, cond Cond) (ETag, error)
	// List returns up to limit objects (0: MaxListLimit) whose keys start
	// with prefix and sort after startAfter, in ascending byte order.
	List(ctx context.Context, prefix, startAfter string, limit int) (*ListResult, error)
	// Delete removes the object if cond holds (If-Match only; If-None-Match
	// is invalid). An unconditional Delete of an absent object succeeds.
	Delete(ctx context.Context, key string, cond Cond) error
}

// Op is a storage service operation.
type Op uint8

const (
	OpGet Op = iota + 1
	OpHead
	OpPut
	OpPutMeta
	OpList
	OpDelete
)

var opNames = [...]string{"", "get", "head", "put", "put_meta", "list", "delete"}

func (o Op) String() string {
	if int(o) < len(opNames) && o > 0 {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// IsWrite reports whether o changes the service (put, put_meta, delete):
// writes and reads draw from their own latency distributions.
func (o Op) IsWrite() bool { return o == OpPut || o == OpPutMeta || o == OpDelete }

// invalid wraps ErrInvalid with the reason.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// CheckKey checks an object key: 1 to MaxKeyBytes bytes, valid UTF-8 is not
// required, but no NUL (S3 refuses it).
func CheckKey(key string) error {
	switch {
	case key == "":
		return invalid("empty key")
	case len(key) > MaxKeyBytes:
		return invalid("key of %d bytes (at most %d)", len(key), MaxKeyBytes)
	case strings.IndexByte(key, 0) >= 0:
		return invalid("key %q holds a NUL byte", key)
	}
	return nil
}

// CheckWrite checks a Put or PutMeta (data nil and putMeta true for the
// latter) against the limits and the rules on conditions.
func CheckWrite(key string, data []byte, meta Meta, cond Cond, putMeta bool) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if len(data) > MaxDataBytes {
		return invalid("%d bytes of data (at most %d)", len(data), MaxDataBytes)
	}
	if n := MetaSize(meta); n > MaxMetaBytes {
		return invalid("%d bytes of metadata (at most %d)", n, MaxMetaBytes)
	}
	for _, k := range meta.Names() {
		if k == "" {
			return invalid("a metadata name is empty")
		}
	}
	if cond.IfMatch != "" && cond.IfNoneMatch {
		return invalid("both if-match and if-none-match")
	}
	if putMeta && cond.IfNoneMatch {
		return invalid("put_meta with if-none-match: it never creates an object")
	}
	return nil
}

// CheckDelete checks a Delete.
func CheckDelete(key string, cond Cond) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if cond.IfNoneMatch {
		return invalid("delete with if-none-match")
	}
	return nil
}

// CheckList checks a List and returns its effective limit.
func CheckList(prefix, startAfter string, limit int) (int, error) {
	switch {
	case limit < 0 || limit > MaxListLimit:
		return 0, invalid("list limit %d (0 to %d)", limit, MaxListLimit)
	case len(prefix) > MaxKeyBytes || len(startAfter) > MaxKeyBytes:
		return 0, invalid("list prefix or start-after longer than %d bytes", MaxKeyBytes)
	}
	if limit == 0 {
		limit = MaxListLimit
	}
	return limit, nil
}
