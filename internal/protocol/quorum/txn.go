package quorum

import (
	"fmt"
	"strconv"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// RunsTxns implements protocol.Transactional: transactions run where
// conditional writes do, on a single-node cluster, whose one replica owns
// every key and handles one request at a time (doc.go, "Transactions").
func (k *Keyspace) RunsTxns() bool { return k.OrdersWrites() }

// TxnRefusal is the error a transaction gets in a keyspace of several
// nodes.
const TxnRefusal = "quorum: transactions need a single-node cluster, whose one replica owns every key and runs each transaction in one step; " +
	"with several nodes, no replica orders the writes of several keys"

// txn runs a transaction on a single-node keyspace in one step of the
// event loop: it reads every declared key, decides (an Add of a key that
// is not a decimal int64, or that would overflow, fails the transaction
// with ErrInvalid, nothing written), stamps every write with one version
// from the HLC, stores them and replies. The runtime persists the step's
// writes before the reply leaves (persist before send), and no other
// request runs in between, so the transaction is serializable, indeed
// strictly so: it takes effect at one point of the replica's order.
func (r *Replica) txn(e env.Env, req *wire.Request) {
	fail := func(code wire.ErrorCode, format string, args ...any) {
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: code, Msg: fmt.Sprintf(format, args...)}})
	}
	if !r.ks.RunsTxns() {
		fail(wire.ErrInvalid, "%s", TxnRefusal)
		return
	}
	if err := req.Txn.Check(); err != nil {
		fail(wire.ErrInvalid, "quorum: %v", err)
		return
	}
	ops := req.Txn.Ops
	results := make([]wire.TxnResult, len(ops))
	// Read phase: every key as it stands before the transaction (a read
	// then a write of one key reads the value before the write).
	type write struct {
		key   string
		rec   store.Record
		found bool         // the key had a record,
		cur   wire.Version // of this version
	}
	var writes []write
	for i, op := range ops {
		cur, ok, err := e.Store().Get(op.Key)
		if err != nil {
			fail(wire.ErrUnavailable, "quorum: local store failed: %v", err)
			return
		}
		live := ok && !cur.Tombstone
		if op.Kind == wire.TxnRead || op.Kind == wire.TxnAdd {
			results[i] = wire.TxnResult{Found: live, Version: cur.Version}
			if live {
				results[i].Value = cur.Value
			}
		}
		switch op.Kind {
		case wire.TxnWrite:
			rec := store.Record{Tombstone: op.Delete}
			if !op.Delete {
				rec.Value = op.Value
			}
			writes = append(writes, write{op.Key, rec, ok, cur.Version})
		case wire.TxnAdd:
			var n int64
			if live {
				if n, err = strconv.ParseInt(string(cur.Value), 10, 64); err != nil {
					fail(wire.ErrInvalid, "quorum: add to %q: its value is not a decimal integer; nothing was written", op.Key)
					return
				}
			}
			if op.Delta > 0 && n > 1<<63-1-op.Delta || op.Delta < 0 && n < -1<<63-op.Delta {
				fail(wire.ErrInvalid, "quorum: add %+d to %q (%d) would overflow; nothing was written", op.Delta, op.Key, n)
				return
			}
			writes = append(writes, write{op.Key, store.Record{Value: strconv.AppendInt(nil, n+op.Delta, 10)}, ok, cur.Version})
		}
	}
	// Write phase: one version, above every version read (the HLC has
	// observed each, and this node stamped them all).
	var v wire.Version
	if len(writes) > 0 {
		v = wire.Version{TS: r.clock.Now(e.Wall()), Node: r.id}
	}
	for _, w := range writes {
		if !env.Invariant(e, !w.found || w.cur.Less(v), "quorum: transaction write of %q stamped %v at or below its record's %v", w.key, v, w.cur) {
			return
		}
	}
	for _, w := range writes {
		w.rec.Version = v
		// put fails the node on an error: the write may or may not have
		// taken effect (doc.go, "Storage failure"); this reply does not
		// leave.
		if err := r.put(e, w.key, w.rec); err != nil {
			fail(wire.ErrUnavailable, "%v", err)
			return
		}
	}
	e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Version: v, Txn: results})
}
