package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/ring"
	"github.com/lightcone/lightcone/internal/wire"
	"github.com/lightcone/lightcone/internal/workload"
)

// Transactional runs (Config.Transactions): each client operation is one
// wire.OpTxn of workload.TxnGenerator's, recorded into []check.Txn and
// checked for serializability (check.CheckTxns).

// modelSerializable is what check: auto means for a transactional
// history.
const modelSerializable = "serializable"

// isTxnModel reports whether model checks transactional histories only
// (check.TxnModels but none).
func isTxnModel(model string) bool { return model != "none" && contains(check.TxnModels, model) }

// resolveTxns validates Config.Transactions against the rest of the
// config and the protocol.
func (r *resolved) resolveTxns() error {
	c := r.cfg
	if c.Transactions == nil {
		if isTxnModel(c.Check) {
			return fmt.Errorf("check: %s needs a transactional workload (transactions:)", c.Check)
		}
		return nil
	}
	spec := *c.Transactions
	spec.EnsureDefaults()
	if err := spec.Validate(); err != nil {
		return err
	}
	switch {
	case c.Check != "auto" && !contains(check.TxnModels, c.Check):
		return fmt.Errorf("check: %q; a transactional workload is checked with auto (%s) or %s", c.Check, modelSerializable, strings.Join(check.TxnModels, ", "))
	case c.Batch > 1:
		return fmt.Errorf("batch: %d; a transactional workload runs one transaction per operation", c.Batch)
	case c.RegionKeys != 0:
		return fmt.Errorf("region_keys: %g; a transactional workload has no region rows", c.RegionKeys)
	}
	if ref := protocol.TxnRefusal(r.def, r.proto); ref != nil {
		return fmt.Errorf("transactions: %s", ref.Msg)
	}
	r.txns = &spec
	return nil
}

// newTxnGenerator builds the run's transaction generator: keys in ring
// order, so every transaction is chainable.
func (r *resolved) newTxnGenerator() *workload.TxnGenerator {
	g, err := workload.NewTxnGenerator(*r.txns, ring.Hash)
	if err != nil {
		panic(err) // validated in resolveTxns
	}
	return g
}

// txnRequest turns a generated transaction into its declared operations:
// its own (t.Ops, TPC-C), or reads, or per key an add of 1 (update add)
// or a read then a write of a fresh unique value (update write). Written
// values are drawn with next.
func txnRequest(t workload.Txn, update string, next func() string) *wire.Txn {
	w := &wire.Txn{ReadOnly: t.ReadOnly}
	if t.Ops != nil {
		for _, op := range t.Ops {
			switch op.Kind {
			case workload.TxnRead:
				w.Ops = append(w.Ops, wire.TxnOp{Kind: wire.TxnRead, Key: op.Key})
			case workload.TxnAdd:
				w.Ops = append(w.Ops, wire.TxnOp{Kind: wire.TxnAdd, Key: op.Key, Delta: op.Delta})
			default:
				w.Ops = append(w.Ops, wire.TxnOp{Kind: wire.TxnWrite, Key: op.Key, Value: []byte(next())})
			}
		}
		return w
	}
	for _, k := range t.Keys {
		switch {
		case t.ReadOnly:
			w.Ops = append(w.Ops, wire.TxnOp{Kind: wire.TxnRead, Key: k})
		case update == workload.UpdateAdd:
			w.Ops = append(w.Ops, wire.TxnOp{Kind: wire.TxnAdd, Key: k, Delta: 1})
		default:
			w.Ops = append(w.Ops, wire.TxnOp{Kind: wire.TxnRead, Key: k}, wire.TxnOp{Kind: wire.TxnWrite, Key: k, Value: []byte(next())})
		}
	}
	return w
}

// versionPos is a version as a position in the system's claimed order of
// writes; the zero version is unset.
func versionPos(v wire.Version) check.Position {
	if v.IsZero() {
		return check.Position{}
	}
	return check.Position{Set: true, T: v.TS.WallNanos, Sub: int64(v.TS.Logical), Node: int64(v.Node)}
}

// recordTxn is what a client saw of transaction t: its accesses, one per
// key in declared order (a read then a write of one key are one access),
// with what the reply reported. An add's written value is known only when
// it committed (the value it read, plus its delta).
func recordTxn(client, call, ret int64, t *wire.Txn, rep *wire.Reply) check.Txn {
	rec := check.Txn{Client: client, Call: call, Return: ret, Outcome: check.OK}
	switch {
	case rep.Err == nil:
		if !t.ReadOnly {
			rec.Version = versionPos(rep.Version)
		}
	case rep.Err.OutcomeUnknown() && !t.ReadOnly:
		rec.Outcome, rec.Return = check.Unknown, check.Never
	default:
		rec.Outcome = check.Failed
	}
	committed := rep.Err == nil && len(rep.Txn) == len(t.Ops)
	for i, op := range t.Ops {
		if n := len(rec.Ops); n == 0 || rec.Ops[n-1].Key != op.Key {
			rec.Ops = append(rec.Ops, check.TxnAccess{Key: op.Key})
		}
		a := &rec.Ops[len(rec.Ops)-1]
		if op.Kind == wire.TxnRead || op.Kind == wire.TxnAdd {
			a.Read = true
			if committed {
				res := rep.Txn[i]
				a.ReadFound, a.ReadValue, a.ReadVersion = res.Found, string(res.Value), versionPos(res.Version)
			}
		}
		switch op.Kind {
		case wire.TxnWrite:
			a.Write, a.WriteFound, a.WriteValue = true, !op.Delete, string(op.Value)
		case wire.TxnAdd:
			a.Write, a.WriteFound = true, true
			if committed {
				n, _ := strconv.ParseInt(a.ReadValue, 10, 64) // absent: 0
				a.WriteValue = strconv.FormatInt(n+op.Delta, 10)
			} else {
				a.WriteUnknown = rec.Outcome == check.Unknown // its read was never seen
			}
		}
	}
	return rec
}

// checkTxns checks the run's transactional history against model (auto:
// serializable).
func (rn *runner) checkTxns(model string) *CheckResult {
	if model == "auto" {
		model = modelSerializable
	}
	if model == "none" {
		return nil
	}
	res, err := check.CheckTxns(model, rn.txns)
	if err != nil {
		panic(err) // models are validated in resolveTxns
	}
	return &CheckResult{Model: model, Verdict: res.Verdict.String(), Key: res.Key, Detail: res.Detail, Ops: len(rn.txns)}
}

// TxnOutcomes counts a run's measured transactions (started after the
// warm-up) of one kind by outcome (Result.TxnOutcomes).
type TxnOutcomes struct {
	Committed int64 `json:"committed"`
	// Aborted were refused: they took no effect (any error but a
	// timeout; the protocols' aborts are ErrUnavailable).
	Aborted int64 `json:"aborted"`
	// Unknown timed out: they may or may not have taken effect.
	Unknown int64 `json:"unknown"`
}

// Total is every counted transaction.
func (o TxnOutcomes) Total() int64 { return o.Committed + o.Aborted + o.Unknown }

// countTxn counts one measured transaction of kind class ("read": read-only,
// "rmw": read-write) that ended with err.
func (rn *runner) countTxn(class string, err *wire.Error) {
	if rn.txnOut == nil {
		rn.txnOut = map[string]TxnOutcomes{}
	}
	o := rn.txnOut[class]
	switch {
	case err == nil:
		o.Committed++
	case err.OutcomeUnknown():
		o.Unknown++
	default:
		o.Aborted++
	}
	rn.txnOut[class] = o
}
