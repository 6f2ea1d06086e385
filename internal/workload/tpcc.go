package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
)

// TPCCSpec is a scaled-down subset of TPC-C (TPC Benchmark C, revision
// 5.11, §2.4 and §2.6) for Catenae's Fig. 4.30 (seed 000 §4.3.4): its two
// transactions the thesis runs, NewOrder (read-write) and OrderStatus
// (read-only), as declared key-value operations.
//
// Scale, against the specification's: Warehouses (default 1), Districts
// per warehouse (default 10, as TPC-C), Customers per district (default
// 30; TPC-C 3,000) and Items (default 1,000; TPC-C 100,000), one stock
// record per warehouse and item. Records start absent (no load phase):
// counters start at 0 and the first reads find nothing.
//
// NewOrder (TPC-C §2.4): a customer of a random district of a random home
// warehouse orders 5..15 distinct items (uniform). Declared operations:
// read the warehouse (its tax), add 1 to the district (its next order
// id: the add reads and increments it), read the customer (discount,
// credit), write the order, and per item read the item, add −quantity
// (1..10) to its stock at the supplying warehouse (the home one, or with
// probability 1% another, as TPC-C) and write the order line: at most
// 3 + 3·15 = 48 operations.
//
// OrderStatus (TPC-C §2.6): read a random customer, then its last order and
// that order's lines. A key-value store has no index from a customer to
// its orders, so the generator keeps one: the key of the last order it
// issued for each customer (the order may not have committed, or have
// aborted: its reads then find nothing). A customer without one reads
// only the customer record.
//
// Not modelled: NURand (customers and items are uniform), customer
// selection by last name, the 1% of NewOrders rolled back for an unused
// item, the stock refill rule (stock quantities only go down), and TPC-C's
// other three transactions.
type TPCCSpec struct {
	Warehouses         int     `yaml:"warehouses"`           // default 1
	Districts          int     `yaml:"districts"`            // per warehouse; default 10
	Customers          int     `yaml:"customers"`            // per district; default 30
	Items              int     `yaml:"items"`                // default 1000
	NewOrderProportion float64 `yaml:"new_order_proportion"` // share of NewOrder (the rest OrderStatus); default 0.5 (-1: none)
}

// TPC-C transaction names (Txn.Name).
const (
	TxnNewOrder    = "new_order"
	TxnOrderStatus = "order_status"
)

// TPC-C's order size (§2.4.1.3: ol_cnt uniform in 5..15) and quantity
// (§2.4.1.5: ol_quantity uniform in 1..10).
const (
	tpccMinLines    = 5
	tpccMaxLines    = 15
	tpccMaxQuantity = 10
	tpccRemoteShare = 0.01 // §2.4.1.5: 1% of order lines supplied by a remote warehouse
)

// EnsureDefaults fills zero fields with the documented defaults.
func (s *TPCCSpec) EnsureDefaults() {
	if s.Warehouses == 0 {
		s.Warehouses = 1
	}
	if s.Districts == 0 {
		s.Districts = 10
	}
	if s.Customers == 0 {
		s.Customers = 30
	}
	if s.Items == 0 {
		s.Items = 1000
	}
	if s.NewOrderProportion == 0 {
		s.NewOrderProportion = 0.5 // -1 (none) stays: filling defaults twice must not undo it
	}
}

// Validate reports the first problem with s (after EnsureDefaults).
func (s TPCCSpec) Validate() error {
	bad := func(format string, args ...any) error {
		return errors.New("transactions: tpcc: " + fmt.Sprintf(format, args...))
	}
	const limit = 1 << 20 // keeps the generator's last-order index small
	switch {
	case s.Warehouses < 1 || s.Warehouses > 1000:
		return bad("warehouses: %d; must be in 1..1000", s.Warehouses)
	case s.Districts < 1 || s.Districts > 100:
		return bad("districts: %d; must be in 1..100", s.Districts)
	case s.Customers < 1 || s.Warehouses*s.Districts*s.Customers > limit:
		return bad("customers: %d; must be at least 1, and warehouses × districts × customers at most %d", s.Customers, limit)
	case s.Items < tpccMaxLines || s.Items > limit:
		return bad("items: %d; must be in %d..%d (an order has up to %d distinct items)", s.Items, tpccMaxLines, limit, tpccMaxLines)
	case !(s.NewOrderProportion == -1 || s.NewOrderProportion >= 0 && s.NewOrderProportion <= 1):
		return bad("new_order_proportion: %g; must be in [0, 1] (-1: none, since 0 takes the default)", s.NewOrderProportion)
	}
	return nil
}

// tpccGen generates TPCCSpec's transactions. Like TxnGenerator it is
// deterministic given the *rand.Rand passed to next.
type tpccGen struct {
	spec   TPCCSpec
	orders uint64 // orders issued so far: the next order's number
	// last is, per customer (tpccGen.customer), the last order issued for
	// it: its key and number of lines (0: none yet).
	last []tpccOrder
}

type tpccOrder struct {
	key   string
	lines int
}

func newTPCCGen(s TPCCSpec) *tpccGen {
	return &tpccGen{spec: s, last: make([]tpccOrder, s.Warehouses*s.Districts*s.Customers)}
}

// Key names: one prefix per table.
func tpccWarehouse(w int) string { return "tpcc/w" + strconv.Itoa(w) }
func tpccDistrict(w, d int) string {
	return tpccWarehouse(w) + "/d" + strconv.Itoa(d)
}
func tpccCustomer(w, d, c int) string {
	return tpccDistrict(w, d) + "/c" + strconv.Itoa(c)
}
func tpccStock(w, i int) string { return tpccWarehouse(w) + "/s" + strconv.Itoa(i) }
func tpccItem(i int) string     { return "tpcc/i" + strconv.Itoa(i) }

// next draws one transaction; its operations are in generation order
// (TxnGenerator.Next sorts them).
func (g *tpccGen) next(r *rand.Rand) Txn {
	s := g.spec
	w, d, c := r.IntN(s.Warehouses), r.IntN(s.Districts), r.IntN(s.Customers)
	cust := tpccCustomer(w, d, c)
	idx := (w*s.Districts+d)*s.Customers + c
	if r.Float64() >= s.NewOrderProportion { // -1: always
		t := Txn{ReadOnly: true, Name: TxnOrderStatus, Ops: []TxnOp{{Kind: TxnRead, Key: cust}}}
		if o := g.last[idx]; o.lines > 0 {
			t.Ops = append(t.Ops, TxnOp{Kind: TxnRead, Key: o.key})
			for l := range o.lines {
				t.Ops = append(t.Ops, TxnOp{Kind: TxnRead, Key: o.key + "/l" + strconv.Itoa(l)})
			}
		}
		return t
	}
	g.orders++
	order := tpccDistrict(w, d) + "/o" + strconv.FormatUint(g.orders, 10)
	lines := tpccMinLines + r.IntN(tpccMaxLines-tpccMinLines+1)
	g.last[idx] = tpccOrder{key: order, lines: lines}
	t := Txn{Name: TxnNewOrder, Ops: []TxnOp{
		{Kind: TxnRead, Key: tpccWarehouse(w)},
		{Kind: TxnAdd, Key: tpccDistrict(w, d), Delta: 1},
		{Kind: TxnRead, Key: cust},
		{Kind: TxnWrite, Key: order},
	}}
	items := make([]int, 0, lines)
	for len(items) < lines {
		if i := r.IntN(s.Items); !slices.Contains(items, i) {
			items = append(items, i)
		}
	}
	for l, i := range items {
		supply := w
		if s.Warehouses > 1 && r.Float64() < tpccRemoteShare {
			supply = (w + 1 + r.IntN(s.Warehouses-1)) % s.Warehouses
		}
		qty := 1 + r.IntN(tpccMaxQuantity)
		t.Ops = append(t.Ops,
			TxnOp{Kind: TxnRead, Key: tpccItem(i)},
			TxnOp{Kind: TxnAdd, Key: tpccStock(supply, i), Delta: -int64(qty)},
			TxnOp{Kind: TxnWrite, Key: order + "/l" + strconv.Itoa(l)})
	}
	return t
}
