package storagesvc

import (
	"context"
	"errors"
	"fmt"

	"github.com/lightcone/lightcone/internal/wire"
)

// Addr is the address of region's storage service: protocols Send Requests
// to it and receive Responses from it (wire.StorageService).
func Addr(region int) wire.NodeID { return wire.StorageService(region) }

// Request is one storage service operation sent by a protocol to a
// region's service address. The fields an Op does not use are zero.
type Request struct {
	// ID is chosen by the sender and echoed in the Response. The network
	// may lose or duplicate either message, so a sender matches answers to
	// requests by ID and ignores an answer it no longer waits for.
	ID   uint64
	Op   Op
	Key  string // all but list
	Data []byte // put
	Meta Meta   // put, put_meta
	Cond Cond   // put, put_meta, delete
	// Prefix, StartAfter and Limit are a list's (Limit 0: MaxListLimit).
	Prefix     string
	StartAfter string
	Limit      int
}

// Kind implements wire.Msg.
func (*Request) Kind() string { return "storagesvc.request" }

// Code is a Response's outcome.
type Code uint8

const (
	OK Code = iota
	NotFound
	PreconditionFailed
	Unavailable // outcome unknown
	Invalid
)

var codeErrs = [...]error{nil, ErrNotFound, ErrPreconditionFailed, ErrUnavailable, ErrInvalid}

func (c Code) String() string {
	switch c {
	case OK:
		return "ok"
	case NotFound:
		return "not_found"
	case PreconditionFailed:
		return "precondition_failed"
	case Unavailable:
		return "unavailable"
	case Invalid:
		return "invalid"
	}
	return fmt.Sprintf("code(%d)", uint8(c))
}

// CodeOf is the Code of an error a Service returned (Unavailable for an
// error that is none of this package's: its outcome is unknown).
func CodeOf(err error) Code {
	for c, e := range codeErrs {
		if e != nil && errors.Is(err, e) {
			return Code(c)
		}
	}
	if err == nil {
		return OK
	}
	return Unavailable
}

// Response is a storage service's answer to a Request.
type Response struct {
	ID   uint64 // the Request's
	Op   Op     // the Request's
	Code Code
	Msg  string // the error's detail, if Code is not OK
	// Object is what get and head read (Data only for get); ETag alone is
	// what put and put_meta wrote.
	ETag ETag
	Data []byte
	Meta Meta
	Size int64
	// Entries and Truncated are a list's page.
	Entries   []Entry
	Truncated bool
}

// Kind implements wire.Msg.
func (*Response) Kind() string { return "storagesvc.response" }

// Err is the Response's outcome as an error wrapping this package's
// sentinel (nil if OK).
func (r *Response) Err() error {
	if r.Code == OK {
		return nil
	}
	base := ErrUnavailable
	if int(r.Code) < len(codeErrs) {
		base = codeErrs[r.Code]
	}
	if r.Msg == "" {
		return base
	}
	return &respError{base: base, msg: r.Msg}
}

// respError is a Response's error: its message is the service's, and it
// wraps the sentinel of its Code.
type respError struct {
	base error
	msg  string
}

func (e *respError) Error() string { return e.msg }
func (e *respError) Unwrap() error { return e.base }

// Object is the object a get or head read.
func (r *Response) Object(key string) *Object {
	return &Object{Key: key, Data: r.Data, Meta: r.Meta, ETag: r.ETag, Size: r.Size}
}

// MessageTypes registers Request and Response with a codec. A protocol that
// talks to storage services lists them among its own message types
// (wire.NewCodec registers a kind two protocols share once).
func MessageTypes() []wire.MsgType {
	return []wire.MsgType{
		{Kind: "storagesvc.request", New: func() wire.Encodable { return &Request{} }},
		{Kind: "storagesvc.response", New: func() wire.Encodable { return &Response{} }},
	}
}

// Exec performs req on svc and returns the answer (the runtimes call it;
// protocols send the Request instead).
func Exec(ctx context.Context, svc Service, req *Request) *Response {
	resp := &Response{ID: req.ID, Op: req.Op}
	var err error
	switch req.Op {
	case OpGet, OpHead:
		var o *Object
		if req.Op == OpGet {
			o, err = svc.Get(ctx, req.Key)
		} else {
			o, err = svc.Head(ctx, req.Key)
		}
		if err == nil {
			resp.ETag, resp.Data, resp.Meta, resp.Size = o.ETag, o.Data, o.Meta, o.Size
		}
	case OpPut:
		resp.ETag, err = svc.Put(ctx, req.Key, req.Data, req.Meta, req.Cond)
	case OpPutMeta:
		resp.ETag, err = svc.PutMeta(ctx, req.Key, req.Meta, req.Cond)
	case OpList:
		var l *ListResult
		l, err = svc.List(ctx, req.Prefix, req.StartAfter, req.Limit)
		if err == nil {
			resp.Entries, resp.Truncated = l.Entries, l.Truncated
		}
	case OpDelete:
		err = svc.Delete(ctx, req.Key, req.Cond)
	default:
		err = invalid("unknown operation %d", req.Op)
	}
	if err != nil {
		*resp = Response{ID: req.ID, Op: req.Op, Code: CodeOf(err)}
		if err != codeErrs[resp.Code] {
			resp.Msg = err.Error() // detail beyond the code's sentinel
		}
	}
	return resp
}

// Unwrap peels wrappers (the keyspace envelope) off m. It returns the
// request inside and a function that wraps an answer the same way, or
// ok false if m carries no Request.
func Unwrap(m wire.Msg) (req *Request, wrap func(wire.Msg) wire.Msg, ok bool) {
	wrap = func(m wire.Msg) wire.Msg { return m }
	for depth := 0; depth < 8; depth++ {
		switch v := m.(type) {
		case *Request:
			return v, wrap, true
		case wire.Wrapper:
			outer, w := wrap, v
			wrap = func(m wire.Msg) wire.Msg { return outer(w.Rewrap(m)) }
			m = v.Inner()
		default:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// Encoding.

// AppendMeta appends m's encoding (sorted by name): the wire's, and the S3
// adapter's object header.
func AppendMeta(b []byte, m Meta) []byte {
	names := m.Names()
	b = wire.AppendUvarint(b, uint64(len(names)))
	for _, k := range names {
		b = wire.AppendString(b, k)
		b = wire.AppendString(b, m[k])
	}
	return b
}

// DecodeMeta reads what AppendMeta wrote.
func DecodeMeta(d *wire.Decoder) Meta {
	n := d.Uvarint()
	if n > MaxMetaBytes {
		d.Fail(fmt.Errorf("storagesvc: %d metadata entries", n))
		return nil
	}
	if n == 0 {
		return nil
	}
	m := make(Meta, n)
	for range n {
		k := d.String()
		m[k] = d.String()
	}
	return m
}

func appendCond(b []byte, c Cond) []byte {
	b = wire.AppendString(b, string(c.IfMatch))
	return wire.AppendBool(b, c.IfNoneMatch)
}

func decodeCond(d *wire.Decoder) Cond {
	return Cond{IfMatch: ETag(d.String()), IfNoneMatch: d.Bool()}
}

// AppendPayload implements wire.Encodable.
func (r *Request) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, r.ID)
	b = wire.AppendUvarint(b, uint64(r.Op))
	b = wire.AppendString(b, r.Key)
	b = wire.AppendBytes(b, r.Data)
	b = AppendMeta(b, r.Meta)
	b = appendCond(b, r.Cond)
	b = wire.AppendString(b, r.Prefix)
	b = wire.AppendString(b, r.StartAfter)
	return wire.AppendVarint(b, int64(r.Limit))
}

// DecodePayload implements wire.Encodable.
func (r *Request) DecodePayload(d *wire.Decoder) {
	r.ID = d.Uvarint()
	r.Op = Op(decodeByte(d))
	r.Key = d.String()
	r.Data = d.Bytes()
	r.Meta = DecodeMeta(d)
	r.Cond = decodeCond(d)
	r.Prefix = d.String()
	r.StartAfter = d.String()
	r.Limit = int(d.Varint()) // checked by the service (CheckList)
}

// AppendPayload implements wire.Encodable.
func (r *Response) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, r.ID)
	b = wire.AppendUvarint(b, uint64(r.Op))
	b = wire.AppendUvarint(b, uint64(r.Code))
	b = wire.AppendString(b, r.Msg)
	b = wire.AppendString(b, string(r.ETag))
	b = wire.AppendBytes(b, r.Data)
	b = AppendMeta(b, r.Meta)
	b = wire.AppendVarint(b, r.Size)
	b = wire.AppendUvarint(b, uint64(len(r.Entries)))
	for _, e := range r.Entries {
		b = wire.AppendString(b, e.Key)
		b = wire.AppendString(b, string(e.ETag))
	}
	return wire.AppendBool(b, r.Truncated)
}

// DecodePayload implements wire.Encodable.
func (r *Response) DecodePayload(d *wire.Decoder) {
	r.ID = d.Uvarint()
	r.Op = Op(decodeByte(d))
	r.Code = Code(decodeByte(d))
	r.Msg = d.String()
	r.ETag = ETag(d.String())
	r.Data = d.Bytes()
	r.Meta = DecodeMeta(d)
	r.Size = d.Varint()
	n := d.Uvarint()
	if n > MaxListLimit {
		d.Fail(fmt.Errorf("storagesvc: list page of %d entries", n))
		return
	}
	for range n {
		r.Entries = append(r.Entries, Entry{Key: d.String(), ETag: ETag(d.String())})
	}
	r.Truncated = d.Bool()
}

func decodeByte(d *wire.Decoder) uint8 {
	v := d.Uvarint()
	if v > 255 {
		d.Fail(fmt.Errorf("storagesvc: field value %d out of range", v))
	}
	return uint8(v)
}
