package cric

import (
	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/wire"
)

// Propose assistants (PVMs, seed 001 §5.2.4). With propose_assistants on,
// a proposer does not run Prepare's conditional write from afar: it sends
// a PrepareReq to the assistant of the acceptor's region (that region's
// first node), which reads the acceptor's metadata next to the storage
// service (Head), runs state.promise, installs the result with a
// conditional PutMeta and, if another writer changed the object in
// between, reads and tries again (up to pvmTries): a conditional write
// refused only because the ETag moved, while the state still allows the
// promise, is a false propose failure, and a round trip inside a region
// makes it rare. It answers with the outcome and the state and ETag the
// proposer's conditional Accept needs. Assistants are stateless (a
// restarted one has lost nothing) and never carry object data; Accepts,
// commit bits and the fast round go to the services directly.

// pvmTries bounds an assistant's read-promise-write attempts per request.
const pvmTries = 4

// maxPVMJobs bounds an assistant's jobs in flight; past it they are
// dropped whole (their proposers' phases time out and re-read).
const maxPVMJobs = 4096

// Assistant answers.
const (
	pvmPromised uint8 = iota + 1 // the promise is installed; Meta, ETag: the state now
	pvmRefused                   // the state refuses it; Meta, ETag (or Absent): that state
	pvmUnknown                   // no outcome known (an error, no answer, or tries spent)
)

// PrepareReq asks a propose assistant to run Prepare for ballot B at
// version N on acceptor Acc's object Key.
type PrepareReq struct {
	ID  uint64
	Key string
	Acc uint32
	N   uint64
	B   Ballot
}

// PrepareResp is an assistant's answer to the PrepareReq with ID.
type PrepareResp struct {
	ID     uint64
	Code   uint8
	ETag   storagesvc.ETag
	Meta   storagesvc.Meta
	Absent bool
	// Retries are the conditional writes the assistant repeated because
	// the object changed under it while its state still allowed the
	// promise: false propose failures absorbed.
	Retries uint32
}

// Kind implements wire.Msg.
func (*PrepareReq) Kind() string { return "cric.prepare" }

// Kind implements wire.Msg.
func (*PrepareResp) Kind() string { return "cric.prepare_resp" }

// AppendPayload implements wire.Encodable.
func (r *PrepareReq) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, r.ID)
	b = wire.AppendString(b, r.Key)
	b = wire.AppendUvarint(b, uint64(r.Acc))
	b = wire.AppendUvarint(b, r.N)
	return wire.AppendString(b, r.B.String())
}

// DecodePayload implements wire.Encodable.
func (r *PrepareReq) DecodePayload(d *wire.Decoder) {
	r.ID = d.Uvarint()
	r.Key = d.String()
	r.Acc = uint32(d.Uvarint())
	r.N = d.Uvarint()
	b, err := parseBallot(d.String())
	if err != nil {
		d.Fail(err)
	}
	r.B = b
}

// AppendPayload implements wire.Encodable.
func (r *PrepareResp) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, r.ID)
	b = wire.AppendUvarint(b, uint64(r.Code))
	b = wire.AppendString(b, string(r.ETag))
	b = storagesvc.AppendMeta(b, r.Meta)
	b = wire.AppendBool(b, r.Absent)
	return wire.AppendUvarint(b, uint64(r.Retries))
}

// DecodePayload implements wire.Encodable.
func (r *PrepareResp) DecodePayload(d *wire.Decoder) {
	r.ID = d.Uvarint()
	r.Code = uint8(d.Uvarint())
	r.ETag = storagesvc.ETag(d.String())
	r.Meta = storagesvc.DecodeMeta(d)
	r.Absent = d.Bool()
	r.Retries = uint32(d.Uvarint())
}

// messageTypes are cric's messages (the storage services' and the
// assistants').
func messageTypes() []wire.MsgType {
	return append(storagesvc.MessageTypes(),
		wire.MsgType{Kind: "cric.prepare", New: func() wire.Encodable { return &PrepareReq{} }},
		wire.MsgType{Kind: "cric.prepare_resp", New: func() wire.Encodable { return &PrepareResp{} }},
	)
}

// pvmJob is one PrepareReq an assistant is working on; stage is whether
// its outstanding storage request is the Head (false) or the write.
type pvmJob struct {
	from    wire.NodeID
	req     *PrepareReq
	write   bool
	tries   int
	retries uint32
	etag    storagesvc.ETag
	next    state
}

// assist starts an assistant's job (this node is the assistant of the
// acceptor's region).
func (p *Proposer) assist(e env.Env, from wire.NodeID, r *PrepareReq) {
	if int(r.Acc) >= len(p.ks.addrs) || storagesvc.CheckKey(r.Key) != nil {
		return
	}
	if len(p.pvm) >= maxPVMJobs {
		p.pvm = map[uint64]*pvmJob{}
	}
	p.pvmHead(e, &pvmJob{from: from, req: r})
}

func (p *Proposer) pvmHead(e env.Env, j *pvmJob) {
	j.tries++
	j.write = false
	id := p.newID()
	p.pvm[id] = j
	e.Send(p.ks.addrs[j.req.Acc], &storagesvc.Request{ID: id, Op: storagesvc.OpHead, Key: j.req.Key})
}

func (p *Proposer) pvmAnswer(e env.Env, j *pvmJob, code uint8, etag storagesvc.ETag, st state, absent bool) {
	resp := &PrepareResp{ID: j.req.ID, Code: code, ETag: etag, Absent: absent, Retries: j.retries}
	if code != pvmUnknown && !absent {
		resp.Meta = st.meta()
	}
	e.Send(j.from, resp)
}

// pvmStep handles an answer of the storage service to an assistant's job;
// it reports false if r is no job's.
func (p *Proposer) pvmStep(e env.Env, r *storagesvc.Response) bool {
	j, ok := p.pvm[r.ID]
	if !ok {
		return false
	}
	delete(p.pvm, r.ID)
	if j.write {
		switch r.Code {
		case storagesvc.OK:
			p.pvmAnswer(e, j, pvmPromised, r.ETag, j.next, false)
		case storagesvc.PreconditionFailed, storagesvc.NotFound:
			// Changed since the Head: read again, if tries remain. (A
			// duplicate of this very write may have landed first: the
			// next Head shows it, and promising again is harmless.)
			if j.tries >= pvmTries {
				p.pvmAnswer(e, j, pvmUnknown, "", state{}, false)
				return true
			}
			j.retries++
			p.pvmHead(e, j)
		default:
			p.pvmAnswer(e, j, pvmUnknown, "", state{}, false)
		}
		return true
	}
	var st state
	absent := false
	switch r.Code {
	case storagesvc.OK:
		var err error
		if st, err = parseState(r.Meta); err != nil {
			p.pvmAnswer(e, j, pvmUnknown, "", state{}, false)
			return true
		}
	case storagesvc.NotFound:
		absent = true
	default:
		p.pvmAnswer(e, j, pvmUnknown, "", state{}, false)
		return true
	}
	next, ok, _ := st.promise(j.req.N, j.req.B)
	if !ok {
		p.pvmAnswer(e, j, pvmRefused, r.ETag, st, absent)
		return true
	}
	j.write, j.next, j.etag = true, next, r.ETag
	id := p.newID()
	p.pvm[id] = j
	req := &storagesvc.Request{ID: id, Key: j.req.Key, Meta: next.meta()}
	if absent {
		// Create-only, without data: the object's data is written by the
		// first Accept (an assistant never carries data).
		req.Op, req.Cond = storagesvc.OpPut, storagesvc.Cond{IfNoneMatch: true}
	} else {
		req.Op, req.Cond = storagesvc.OpPutMeta, storagesvc.Cond{IfMatch: r.ETag}
	}
	e.Send(p.ks.addrs[j.req.Acc], req)
	return true
}

// prepareVia sends acceptor a's Prepare to its region's assistant.
func (p *Proposer) prepareVia(e env.Env, o *op, a int) {
	req := &PrepareReq{ID: p.newID(), Key: o.key, Acc: uint32(a), N: o.n, B: o.b}
	p.pending[req.ID] = pending{op: o.id, phSeq: o.phSeq, acc: a, kind: phPrepare, pvm: true}
	o.reqs = append(o.reqs, req.ID)
	o.sent++
	e.Send(p.ks.pvmOf[a], req)
}

// prepared handles an assistant's answer for acceptor a of o.
func (p *Proposer) prepared(o *op, a int, r *PrepareResp) {
	p.stats.pvmRetries += uint64(r.Retries)
	if o.views[a].assumed && r.Code != pvmUnknown {
		o.cold = true // the assistant read what the cache miss assumed
	}
	var promised bool
	o.views[a], promised = pvmView(o.views[a], r)
	switch {
	case promised:
		o.ok[a] = true
	case r.Code == pvmRefused && o.views[a].known:
		o.refused++
	case !o.views[a].known:
		p.stats.unknown++
	}
}

// pvmView is what an assistant's answer r shows of an acceptor o viewed
// as old, and whether the promise is installed.
func pvmView(old view, r *PrepareResp) (view, bool) {
	if r.Code != pvmPromised && r.Code != pvmRefused {
		return view{}, false
	}
	st, err := parseState(r.Meta)
	if err != nil {
		return view{}, false
	}
	v := view{known: true, absent: r.Absent, etag: r.ETag, st: st, hasData: r.Absent}
	if r.Code == pvmPromised && !r.Absent && st.V == 0 {
		v.hasData = true // created by the assistant: no value yet
	}
	// The data the proposer read is still the object's if the accepted
	// version and digest are unchanged (a promise changes only PV and PB).
	if old.known && old.hasData && !old.absent && old.st.V == st.V && old.st.W == st.W && old.st.Digest == st.Digest {
		v.data, v.hasData = old.data, true
	}
	return v, r.Code == pvmPromised
}
