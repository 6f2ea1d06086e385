package workload

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// TxnSpec is a transactional workload: Catenae's microbenchmark (seed 000
// §4.3.4). Each transaction touches MinKeys..MaxKeys distinct records
// (uniform in that range), drawn uniformly or from a Zipf law, and is
// read-only with probability ReadOnlyProportion, otherwise read-write:
// each key updated, either by an add (Update "add": a read-modify-write
// every replica can run on its own, as a bank transfer) or by a read then
// a blind write of a fresh value (Update "write"). Keys are declared in
// partition order (NewTxnGenerator's order), so every transaction is
// chainable: it visits partitions in one global order. With TPCC set the
// transactions are instead TPC-C's NewOrder and OrderStatus (TPCCSpec),
// and the microbenchmark's fields are not used.
type TxnSpec struct {
	Records            int     `yaml:"records"`              // records; default 1000
	MinKeys            int     `yaml:"min_keys"`             // keys per transaction, at least; default 1
	MaxKeys            int     `yaml:"max_keys"`             // keys per transaction, at most; default 4
	ReadOnlyProportion float64 `yaml:"read_only_proportion"` // share of read-only transactions; default 0.5 (-1: none)
	Update             string  `yaml:"update"`               // add | write; default add
	Distribution       string  `yaml:"distribution"`         // uniform | zipfian; default uniform
	ZipfTheta          float64 `yaml:"zipf_theta"`           // zipfian's theta, in (0, 1); default 0.99
	// ZipfExponent, when > 0, makes zipfian a plain Zipf law with this
	// exponent s over the records (record i+1 drawn with probability
	// proportional to (i+1)^-s, by inverse CDF), for any s > 0: Catenae's
	// Figs. 4.24 and 4.28 use s = 1 and 2, which Gray et al.'s generator
	// (zipf_theta) cannot. Default 0: zipf_theta.
	ZipfExponent float64 `yaml:"zipf_exponent"`
	// TPCC, if set, replaces the microbenchmark with a TPC-C subset
	// (TPCCSpec). Default: none.
	TPCC *TPCCSpec `yaml:"tpcc"`
}

// Transactional update modes (TxnSpec.Update).
const (
	UpdateAdd   = "add"
	UpdateWrite = "write"
)

// EnsureDefaults fills zero fields with the documented defaults.
func (s *TxnSpec) EnsureDefaults() {
	if s.Records == 0 {
		s.Records = 1000
	}
	if s.MinKeys == 0 {
		s.MinKeys = 1
	}
	if s.MaxKeys == 0 {
		s.MaxKeys = max(4, s.MinKeys)
	}
	if s.ReadOnlyProportion == 0 {
		s.ReadOnlyProportion = 0.5 // -1 (none) stays: filling defaults twice must not undo it
	}
	if s.Update == "" {
		s.Update = UpdateAdd
	}
	if s.Distribution == "" {
		s.Distribution = DistUniform
	}
	if s.ZipfTheta == 0 {
		s.ZipfTheta = DefaultZipfianConstant
	}
	if s.TPCC != nil {
		t := *s.TPCC // never write through a spec another config shares
		t.EnsureDefaults()
		s.TPCC = &t
	}
}

// Validate reports the first problem with s (after EnsureDefaults),
// naming the field and its valid range.
func (s TxnSpec) Validate() error {
	bad := func(format string, args ...any) error {
		return errors.New("transactions: " + fmt.Sprintf(format, args...))
	}
	switch {
	case s.Records < 1:
		return bad("records: %d; must be at least 1", s.Records)
	case s.MinKeys < 1 || s.MaxKeys < s.MinKeys:
		return bad("min_keys %d, max_keys %d: need 1 <= min_keys <= max_keys", s.MinKeys, s.MaxKeys)
	case s.MaxKeys > s.Records:
		return bad("max_keys: %d; at most records (%d): a transaction's keys are distinct", s.MaxKeys, s.Records)
	case s.MaxKeys > 32:
		return bad("max_keys: %d; at most 32 (a read-write transaction declares up to two operations a key, and a transaction at most 64)", s.MaxKeys)
	case !(s.ReadOnlyProportion == -1 || s.ReadOnlyProportion >= 0 && s.ReadOnlyProportion <= 1):
		return bad("read_only_proportion: %g; must be in [0, 1] (-1: none, since 0 takes the default)", s.ReadOnlyProportion)
	case s.Update != UpdateAdd && s.Update != UpdateWrite:
		return bad("update: %q; valid: %s, %s", s.Update, UpdateAdd, UpdateWrite)
	case s.Distribution != DistUniform && s.Distribution != DistZipfian:
		return bad("distribution: %q; valid: %s, %s", s.Distribution, DistUniform, DistZipfian)
	case !(s.ZipfTheta > 0 && s.ZipfTheta < 1) || math.IsNaN(s.ZipfTheta):
		return bad("zipf_theta: %g; must be in (0, 1)", s.ZipfTheta)
	case !(s.ZipfExponent >= 0) || math.IsInf(s.ZipfExponent, 0):
		return bad("zipf_exponent: %g; must be a finite number >= 0 (0: zipf_theta)", s.ZipfExponent)
	case s.ZipfExponent > 0 && s.Records > MaxExactZipfKeys:
		return bad("zipf_exponent: needs records <= %d (its table costs 8 bytes a record; got %d)", MaxExactZipfKeys, s.Records)
	}
	if s.TPCC != nil {
		return s.TPCC.Validate()
	}
	return nil
}

// Txn is one generated transaction: its keys, distinct and in partition
// order, and whether it only reads. Ops, when set (TPC-C), are its
// declared operations in that order; otherwise each key is read, or
// updated as TxnSpec.Update says.
type Txn struct {
	ReadOnly bool
	Keys     []string
	Ops      []TxnOp
	Name     string // TPC-C: new_order or order_status; "" for the microbenchmark
}

// TxnOpKind is the kind of a generated transaction's declared operation.
type TxnOpKind uint8

// Declared operation kinds (wire.TxnRead, TxnWrite, TxnAdd).
const (
	TxnRead  TxnOpKind = iota // read the key
	TxnWrite                  // write a fresh value
	TxnAdd                    // add Delta to the key's integer value (absent: 0)
)

// TxnOp is one declared operation of a generated transaction.
type TxnOp struct {
	Kind  TxnOpKind
	Key   string
	Delta int64 // TxnAdd
}

// TxnGenerator generates a TxnSpec's transactions. Like Generator, it is
// deterministic given the *rand.Rand passed to Next and not safe for
// concurrent use.
type TxnGenerator struct {
	spec  TxnSpec
	keys  []string
	order func(key string) uint64
	zipf  *zipfian
	exact *exactZipf // ZipfExponent > 0
	tpcc  *tpccGen   // TPCC set
}

// NewTxnGenerator fills in s's defaults, validates it and builds a
// generator over records "txn0".."txn<records-1>". order is a key's
// partition position (keys of a transaction are declared by increasing
// order, then by name); nil: by name.
func NewTxnGenerator(s TxnSpec, order func(key string) uint64) (*TxnGenerator, error) {
	s.EnsureDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	g := &TxnGenerator{spec: s, order: order}
	if s.TPCC != nil {
		g.tpcc = newTPCCGen(*s.TPCC)
		return g, nil
	}
	g.keys = make([]string, s.Records)
	for i := range g.keys {
		g.keys[i] = "txn" + strconv.Itoa(i)
	}
	switch {
	case s.Distribution != DistZipfian:
	case s.ZipfExponent > 0:
		g.exact = newExactZipf(int64(s.Records), s.ZipfExponent)
	default:
		n := int64(s.Records)
		g.zipf = newZipfian(0, n-1, s.ZipfTheta, zetaStatic(n, s.ZipfTheta))
	}
	return g, nil
}

// Spec is the generator's spec, defaults filled in.
func (g *TxnGenerator) Spec() TxnSpec { return g.spec }

// Next returns the next transaction.
func (g *TxnGenerator) Next(r *rand.Rand) Txn {
	if g.tpcc != nil {
		t := g.tpcc.next(r)
		slices.SortStableFunc(t.Ops, func(a, b TxnOp) int { return g.compare(a.Key, b.Key) })
		for _, op := range t.Ops {
			t.Keys = append(t.Keys, op.Key)
		}
		return t
	}
	s := g.spec
	t := Txn{ReadOnly: r.Float64() < s.ReadOnlyProportion} // -1: never
	n := s.MinKeys + r.IntN(s.MaxKeys-s.MinKeys+1)
	for len(t.Keys) < n {
		var i int64
		switch {
		case g.exact != nil:
			i = g.exact.rank(r) - 1
		case g.zipf != nil:
			i = g.zipf.next(r)
		default:
			i = r.Int64N(int64(s.Records))
		}
		if k := g.keys[i]; !slices.Contains(t.Keys, k) {
			t.Keys = append(t.Keys, k)
		}
	}
	slices.SortFunc(t.Keys, g.compare)
	return t
}

// compare orders keys by partition position, then by name.
func (g *TxnGenerator) compare(a, b string) int {
	if g.order != nil {
		if c := cmp.Compare(g.order(a), g.order(b)); c != 0 {
			return c
		}
	}
	return cmp.Compare(a, b)
}
