package check

import (
	"fmt"
	"strings"
	"time"
)

// Models lists the model names Check accepts.
var Models = []string{"linearizable", "sequential", "sequential-per-key", "regular", "valid-reads", "release", "none"}

// Option tunes Check.
type Option func(*options)

type options struct {
	timeout time.Duration
	budget  int
}

// WithTimeout bounds the linearizability check (0: no bound). Default: 1m.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithBudget bounds the sequential-consistency witness search, in steps.
// Default: DefaultBudget.
func WithBudget(n int) Option { return func(o *options) { o.budget = n } }

// Check runs the checker of the named model on h. model "none" always passes.
// An unknown name is an error that lists the valid ones.
func Check(model string, h History, opts ...Option) (Result, error) {
	o := options{timeout: time.Minute, budget: DefaultBudget}
	for _, f := range opts {
		f(&o)
	}
	switch model {
	case "linearizable":
		return Linearizable(h, o.timeout), nil
	case "sequential":
		return Sequential(h, o.budget), nil
	case "sequential-per-key":
		return SequentialPerKey(h, o.budget), nil
	case "regular":
		return Regular(h), nil
	case "valid-reads":
		return ValidReads(h), nil
	case "release":
		return ReleaseConsistent(h), nil
	case "none":
		return Result{Model: "none", Verdict: Pass}, nil
	}
	return Result{}, fmt.Errorf("check: unknown consistency model %q (valid: %s)", model, strings.Join(Models, ", "))
}

// TxnModels lists the model names CheckTxns accepts: transactional
// histories' models (see doc.go, "serializable").
var TxnModels = []string{"serializable", "strong-session-serializable", "strict-serializable", "none"}

// CheckTxns runs the checker of the named transactional model on h.
// An unknown name is an error that lists the valid ones.
func CheckTxns(model string, h []Txn) (Result, error) {
	switch model {
	case "serializable":
		return Serializable(h), nil
	case "strong-session-serializable":
		return SerializableWith(h, SerializableOpts{Sessions: true}), nil
	case "strict-serializable":
		return StrictSerializable(h), nil
	case "none":
		return Result{Model: "none", Verdict: Pass}, nil
	}
	return Result{}, fmt.Errorf("check: unknown transactional model %q (valid: %s)", model, strings.Join(TxnModels, ", "))
}
