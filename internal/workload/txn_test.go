package workload

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lightcone/lightcone/internal/wire"
)

// TestTxnGenerator: transactions have min..max distinct keys in partition
// order, the read-only share is about the one asked for, a Zipf law makes
// the first record hot, and bad specs are refused naming the field.
func TestTxnGenerator(t *testing.T) {
	order := func(k string) uint64 { return uint64(len(k))<<32 | uint64(k[len(k)-1]) }
	g, err := NewTxnGenerator(TxnSpec{Records: 50, MinKeys: 2, MaxKeys: 5, ReadOnlyProportion: 0.25, Distribution: DistZipfian}, order)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	readOnly, hot := 0, 0
	const n = 4000
	for range n {
		tx := g.Next(r)
		if len(tx.Keys) < 2 || len(tx.Keys) > 5 {
			t.Fatalf("%v: %d keys; want 2..5", tx.Keys, len(tx.Keys))
		}
		if !slices.IsSortedFunc(tx.Keys, func(a, b string) int { return int(order(a)) - int(order(b)) }) {
			t.Fatalf("%v: not in partition order", tx.Keys)
		}
		for i := 1; i < len(tx.Keys); i++ {
			if slices.Contains(tx.Keys[:i], tx.Keys[i]) {
				t.Fatalf("%v: a key twice", tx.Keys)
			}
		}
		if tx.ReadOnly {
			readOnly++
		}
		if slices.Contains(tx.Keys, "txn0") {
			hot++
		}
	}
	if readOnly < n/5 || readOnly > n*3/10 {
		t.Errorf("%d of %d read-only; want about a quarter", readOnly, n)
	}
	if hot < n/4 {
		t.Errorf("txn0 in %d of %d transactions; want the Zipf law's hot record in many", hot, n)
	}
	for spec, want := range map[TxnSpec]string{
		{Records: 3, MaxKeys: 4}: "max_keys",
		{Update: "swap"}:         "update",
		{Distribution: "latest"}: "distribution",
		{ReadOnlyProportion: 2}:  "read_only_proportion",
		{MinKeys: 5, MaxKeys: 2}: "min_keys",
		{ZipfTheta: 1.5}:         "zipf_theta",
	} {
		if _, err := NewTxnGenerator(spec, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v; want an error naming %s", spec, err, want)
		}
	}
}

// TestTxnNoReadOnlyKeptThroughDefaults: read_only_proportion -1 (none)
// survives filling defaults twice (the scenario fills them, then the
// generator does); it once became 0, then the default 0.5.
func TestTxnNoReadOnlyKeptThroughDefaults(t *testing.T) {
	s := TxnSpec{ReadOnlyProportion: -1}
	s.EnsureDefaults()
	g, err := NewTxnGenerator(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		if tx := g.Next(r); tx.ReadOnly {
			t.Fatalf("a read-only transaction with read_only_proportion -1: %+v", tx)
		}
	}
}

// TestTxnZipfExponent: zipf_exponent draws record i+1 with probability
// (i+1)^-s / H(n, s), for s = 1 and 2 (which zipf_theta cannot give), and
// bad exponents are refused naming the field.
func TestTxnZipfExponent(t *testing.T) {
	const records, n = 100, 40000
	for _, s := range []float64{1, 2} {
		g, err := NewTxnGenerator(TxnSpec{Records: records, MinKeys: 1, MaxKeys: 1, Distribution: DistZipfian, ZipfExponent: s}, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := 0.0
		for i := 1; i <= records; i++ {
			h += math.Pow(float64(i), -s)
		}
		r := rand.New(rand.NewPCG(3, 4))
		count := map[string]int{}
		for range n {
			count[g.Next(r).Keys[0]]++
		}
		for i, key := range []string{"txn0", "txn1", "txn9"} {
			rank := []float64{1, 2, 10}[i]
			want := math.Pow(rank, -s) / h
			if got := float64(count[key]) / n; math.Abs(got-want) > 0.01+0.05*want {
				t.Errorf("s=%g: %s drawn %.4f of the time; want %.4f", s, key, got, want)
			}
		}
	}
	for _, e := range []float64{-1, math.Inf(1), math.NaN()} {
		if _, err := NewTxnGenerator(TxnSpec{Distribution: DistZipfian, ZipfExponent: e}, nil); err == nil || !strings.Contains(err.Error(), "zipf_exponent") {
			t.Errorf("zipf_exponent %g: %v; want an error naming zipf_exponent", e, err)
		}
	}
}

// TestTPCC: NewOrder and OrderStatus come in the asked proportion, fit
// wire.Txn's limits (wire.Txn.Check: at most 64 operations, a key once),
// are declared in partition order, increment the district and decrement
// stock with adds, and an OrderStatus reads the last order the generator
// issued for its customer, with all its lines.
func TestTPCC(t *testing.T) {
	order := func(k string) uint64 { return uint64(len(k))<<32 | uint64(k[len(k)-1]) }
	spec := TxnSpec{TPCC: &TPCCSpec{Warehouses: 2, Customers: 3, Items: 50, NewOrderProportion: 0.7}}
	g, err := NewTxnGenerator(spec, order)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	lines := map[string]int{}     // order key: its lines
	lastOf := map[string]string{} // customer key: its last order
	newOrders, withOrder := 0, 0
	const n = 3000
	for range n {
		tx := g.Next(r)
		w := &wire.Txn{ReadOnly: tx.ReadOnly}
		for _, op := range tx.Ops {
			w.Ops = append(w.Ops, wire.TxnOp{Kind: []wire.TxnKind{wire.TxnRead, wire.TxnWrite, wire.TxnAdd}[op.Kind], Key: op.Key, Delta: op.Delta, Value: []byte("v")})
		}
		if err := w.Check(); err != nil {
			t.Fatalf("%s %v: %v", tx.Name, w, err)
		}
		if !slices.IsSortedFunc(tx.Keys, func(a, b string) int { return int(order(a)) - int(order(b)) }) {
			t.Fatalf("%v: not in partition order", tx.Keys)
		}
		var cust, ord string
		adds, writes := 0, 0
		for _, op := range tx.Ops {
			switch {
			case strings.Count(op.Key, "/") == 3 && strings.Contains(op.Key, "/c"):
				cust = op.Key
			case strings.Count(op.Key, "/") == 3 && strings.Contains(op.Key, "/o"):
				ord = op.Key
			}
			switch op.Kind {
			case TxnAdd:
				adds++
				if strings.Contains(op.Key, "/d") != (op.Delta == 1) || !strings.Contains(op.Key, "/d") && (op.Delta < -10 || op.Delta > -1) {
					t.Fatalf("add %+v: want +1 on the district, -1..-10 on stock", op)
				}
			case TxnWrite:
				writes++
			}
		}
		switch tx.Name {
		case TxnNewOrder:
			newOrders++
			l := writes - 1
			if l < 5 || l > 15 || adds != l+1 || len(tx.Ops) != 4+3*l || tx.ReadOnly {
				t.Fatalf("NewOrder %v: %d lines, %d adds; want 5..15 lines, a stock add each and the district's", w, l, adds)
			}
			lines[ord], lastOf[cust] = l, ord
		case TxnOrderStatus:
			if !tx.ReadOnly || cust == "" {
				t.Fatalf("OrderStatus %v: want read-only, reading a customer", w)
			}
			if want := lastOf[cust]; ord != want || want != "" && len(tx.Ops) != 2+lines[want] {
				t.Fatalf("OrderStatus %v: reads order %q; want %q and its %d lines", w, ord, want, lines[want])
			}
			if ord != "" {
				withOrder++
			}
		default:
			t.Fatalf("transaction named %q", tx.Name)
		}
	}
	if newOrders < n*65/100 || newOrders > n*75/100 {
		t.Errorf("%d NewOrders of %d; want about 70%%", newOrders, n)
	}
	if withOrder == 0 {
		t.Error("no OrderStatus found an order")
	}
	for spec, want := range map[TPCCSpec]string{
		{Warehouses: -1}:          "warehouses",
		{Items: 3}:                "items",
		{NewOrderProportion: 1.5}: "new_order_proportion",
		{Districts: 1000}:         "districts",
	} {
		if _, err := NewTxnGenerator(TxnSpec{TPCC: &spec}, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v; want an error naming %s", spec, err, want)
		}
	}
}
