package workload

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
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
