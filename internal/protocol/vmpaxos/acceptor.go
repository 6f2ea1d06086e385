package vmpaxos

import (
	"errors"
	"fmt"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol/cric"
	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// maxLogRecords bounds one object's log (ModeLog): past it appends are
// refused (OK false), as a full Append Blob refuses them; a commit record
// garbage-collects the log well before it under any workload we run.
const maxLogRecords = 4096

var errLogTooLong = errors.New("vmpaxos: log longer than maxLogRecords")

// acceptorState is what an acceptor process stores under an object's key
// in its node's store (ModeLogic): the CPaxos state and the value of its
// version.
func encodeState(st cric.State, data []byte) []byte {
	return wire.AppendBytes(storagesvc.AppendMeta(nil, st.Meta()), data)
}

func decodeState(b []byte) (cric.State, []byte, error) {
	d := wire.NewDecoder(b)
	m := storagesvc.DecodeMeta(d)
	data := d.Bytes()
	if d.Err() != nil {
		return cric.State{}, nil, d.Err()
	}
	st, err := cric.ParseState(m)
	return st, data, err
}

func encodeLog(log []Request) []byte {
	b := wire.AppendUvarint(nil, uint64(len(log)))
	for i := range log {
		b = log[i].AppendPayload(b)
	}
	return b
}

func decodeLog(b []byte) ([]Request, error) {
	d := wire.NewDecoder(b)
	n := d.Uvarint()
	if n > maxLogRecords {
		return nil, errLogTooLong
	}
	var log []Request
	for range n {
		var r Request
		r.DecodePayload(d)
		log = append(log, r)
	}
	return log, d.Err()
}

// acceptor is the acceptor process on an acceptor node: it keeps each
// object's acceptor state (ModeLogic) or log (ModeLog) in the node's
// store, so it survives a crash; the runtime makes the write durable
// before the answer leaves (persist before send).
type acceptor struct {
	ks *Keyspace
}

func (a *acceptor) handle(e env.Env, from wire.NodeID, r *Request) {
	key := a.ks.cfg.KeyPrefix + r.Key
	rec, found, err := e.Store().Get(key)
	if err != nil {
		e.FailStop(fmt.Errorf("vmpaxos: acceptor store: %w", err))
		return
	}
	put := func(v []byte) bool {
		if err := e.Store().Put(key, store.Record{Value: v}); err != nil {
			e.FailStop(fmt.Errorf("vmpaxos: acceptor store: %w", err))
			return false
		}
		return true
	}
	if a.ks.mode == ModeLog {
		var log []Request
		if found {
			if log, err = decodeLog(rec.Value); err != nil {
				e.FailStop(fmt.Errorf("vmpaxos: acceptor log of %q: %w", key, err))
				return
			}
		}
		if r.Op == OpRead {
			e.Send(from, &Response{ID: r.ID, OK: true, Log: log})
			return
		}
		if len(log) >= maxLogRecords {
			e.Send(from, &Response{ID: r.ID})
			return
		}
		log = append(log, *r)
		if r.Op == OpCommit {
			log = collect(log, r.N)
		}
		if put(encodeLog(log)) && r.Op != OpCommit {
			e.Send(from, &Response{ID: r.ID, OK: true})
		}
		return
	}
	var st cric.State
	var data []byte
	if found {
		if st, data, err = decodeState(rec.Value); err != nil {
			e.FailStop(fmt.Errorf("vmpaxos: acceptor state of %q: %w", key, err))
			return
		}
	}
	next, ok, data2 := apply(st, data, r)
	if ok && !put(encodeState(next, data2)) {
		return
	}
	if r.Op == OpCommit {
		return
	}
	resp := &Response{ID: r.ID, OK: ok, State: next.Meta()}
	// The value travels back only when the proposer needs it: for a read,
	// and for a promise on a version the acceptor has accepted (the
	// proposer picks the value to accept from such answers).
	if r.Op == OpRead || r.Op == OpPrepare && next.V == r.N {
		resp.Data = data2
	}
	e.Send(from, resp)
}

// apply is the acceptor logic on one request (cric's Prepare and Accept
// rules, and the commit bit): the state and value after it, and whether
// it changed anything a promise or accept asked for.
func apply(st cric.State, data []byte, r *Request) (cric.State, bool, []byte) {
	switch r.Op {
	case OpPrepare:
		next, ok, _ := st.Promise(r.N, r.B)
		return next, ok, data
	case OpAccept:
		next, ok, _ := st.Accept(r.N, r.B, r.W, cric.Digest(r.Data), r.Del)
		if ok {
			return next, true, r.Data
		}
		return st, false, data
	case OpCommit:
		if st.V == r.N && st.W == r.W && !st.Committed {
			st.Committed = true
			return st, true, data
		}
	}
	return st, false, data
}

// collect drops the records of versions before n from a log whose
// version n is committed: an acceptor that accepted n refuses every
// earlier version (cric rule 1), so replaying the rest gives the same
// state for every version that matters (pPaxos* "optimal garbage
// collection", seed 001 §5.4.1).
func collect(log []Request, n uint64) []Request {
	out := log[:0]
	for _, r := range log {
		if r.N >= n {
			out = append(out, r)
		}
	}
	return out
}

// replay runs the acceptor logic over a log (ModeLog: the proposer is the
// acceptor, §5.2.1 "prior Paxos variants for passive acceptors"): the
// final state and value, and the state and value just after record id
// with whether it took effect (found false: id is not in the log).
func replay(log []Request, id uint64) (final cric.State, finalData []byte, at cric.State, atData []byte, ok, found bool) {
	var st cric.State
	var data []byte
	for i := range log {
		var changed bool
		st, changed, data = apply(st, data, &log[i])
		if log[i].ID == id {
			at, atData, ok, found = st, data, changed, true
		}
	}
	return st, data, at, atData, ok, found
}
