package scenario

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/workload"
)

// TestTxnWorkloadSingleNode runs the transactional workload (adds of 1 on
// Zipf-hot records, half the transactions read-only) on a single-node
// quorum keyspace, which runs each transaction in one step. No update is
// lost: the committed adds of each record read 0, 1, 2, ... each exactly
// once. The serializable check passes, and so does the strict one.
func TestTxnWorkloadSingleNode(t *testing.T) {
	w, err := topo.Parse([]byte("name: one\nnodes_per_region: 1\nregions: [{name: here}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, update := range []string{workload.UpdateAdd, workload.UpdateWrite} {
		res, err := Run(Config{Seed: 7, WorldDef: w, Clients: 8, ClosedLoop: true, Duration: 3 * time.Second,
			Transactions: &workload.TxnSpec{Records: 20, MaxKeys: 4, Distribution: workload.DistZipfian, Update: update}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Txns) < 100 {
			t.Fatalf("%s: %d transactions recorded; want many", update, len(res.Txns))
		}
		reads := map[string][]int{} // key: the values committed adds read
		for _, tx := range res.Txns {
			if tx.Outcome != check.OK {
				t.Fatalf("%s: a transaction failed: %+v (errors %v)", update, tx, res.Errors)
			}
			writes := false
			for _, a := range tx.Ops {
				writes = writes || a.Write
				if update == workload.UpdateAdd && a.Write {
					n, err := strconv.Atoi(a.ReadValue)
					if a.ReadFound && err != nil || !a.ReadFound && a.ReadValue != "" {
						t.Fatalf("add of %q read %q (found %v)", a.Key, a.ReadValue, a.ReadFound)
					}
					reads[a.Key] = append(reads[a.Key], n)
				}
			}
			if writes != tx.Version.Set {
				t.Errorf("%s: transaction %+v: writes %v but version set %v", update, tx, writes, tx.Version.Set)
			}
		}
		for key, rs := range reads {
			seen := make([]bool, len(rs))
			for _, n := range rs {
				if n < 0 || n >= len(rs) || seen[n] {
					t.Fatalf("%s: the adds of %q read %v; want 0..%d each once (an add lost or doubled)", update, key, rs, len(rs)-1)
				}
				seen[n] = true
			}
		}
		c := res.Check
		switch {
		case c == nil || c.Model != "serializable" || c.Ops != len(res.Txns):
			t.Errorf("%s: check %+v; want serializable over %d transactions", update, c, len(res.Txns))
		case c.Verdict != "pass":
			t.Errorf("%s: serializable check: %s %s", update, c.Verdict, c.Detail)
		}
		// One step per transaction on one node: strictly serializable too.
		if r := check.StrictSerializable(res.Txns); r.Verdict != check.Pass {
			t.Errorf("%s: %v", update, r)
		}
	}
}

// TestTxnWorkloadRefused: a transactional workload on a keyspace whose
// protocol cannot run transactions, or with settings that make no sense
// for one, is refused before the run, saying why.
func TestTxnWorkloadRefused(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{World: "meteor3", Transactions: &workload.TxnSpec{}}, "cannot run transactions"},
		{Config{World: "meteor3", Protocol: "lease", Transactions: &workload.TxnSpec{}}, "cannot run transactions"},
		{Config{Check: "serializable"}, "needs a transactional workload"},
		{Config{Check: "strict-serializable"}, "needs a transactional workload"},
		{Config{Check: "linearizable", Transactions: &workload.TxnSpec{}}, "checked with"},
		{Config{Transactions: &workload.TxnSpec{MaxKeys: 40}}, "max_keys"},
	} {
		if _, err := Check(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an error saying %q", c.cfg, err, c.want)
		}
	}
}

// TestTxnRecordingTeeth: the recorded history carries what the
// serializability checker needs to catch a lost update: made to say that
// two adds of a key both read the same value, a passing history fails.
func TestTxnRecordingTeeth(t *testing.T) {
	w, err := topo.Parse([]byte("name: one\nnodes_per_region: 1\nregions: [{name: here}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(Config{Seed: 3, WorldDef: w, Clients: 4, ClosedLoop: true, Duration: time.Second,
		Transactions: &workload.TxnSpec{Records: 5, MaxKeys: 1, ReadOnlyProportion: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if v := check.Serializable(res.Txns).Verdict; v != check.Pass {
		t.Fatalf("the run's own history: %v; want pass", v)
	}
	// The first add of a key that another add later read: the later one
	// now claims to have read what the first read (a lost update).
	first := map[string]int{}
	for i, tx := range res.Txns {
		a := tx.Ops[0]
		j, ok := first[a.Key]
		if !ok {
			first[a.Key] = i
			continue
		}
		b := res.Txns[j].Ops[0]
		tx.Ops[0].ReadFound, tx.Ops[0].ReadValue, tx.Ops[0].ReadVersion, tx.Ops[0].WriteValue = b.ReadFound, b.ReadValue, b.ReadVersion, b.WriteValue
		if r := check.Serializable(res.Txns); r.Verdict != check.Violation {
			t.Errorf("a lost update of %q: %v; want a violation", a.Key, r)
		}
		return
	}
	t.Fatal("no key was added to twice")
}

// TestTxnTPCC runs the TPC-C subset (NewOrder and OrderStatus) with twopl
// on catenae3: the history is serializable, both kinds commit, and
// Result.TxnOutcomes counts as many committed transactions of each kind
// as the latency rows hold, with the aborts beside them.
func TestTxnTPCC(t *testing.T) {
	res, err := Run(Config{Seed: 3, World: "catenae3", Protocol: "twopl", Clients: 24, ClosedLoop: true,
		Duration: 3 * time.Second, Warmup: time.Second,
		Transactions: &workload.TxnSpec{TPCC: &workload.TPCCSpec{Warehouses: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Check; c == nil || c.Model != "serializable" || c.Verdict != "pass" {
		t.Fatalf("check %+v; want serializable: pass", c)
	}
	rows := map[string]int64{}
	for _, r := range res.Rows {
		if r.Region != "all" {
			rows[r.Op] += r.Count
		}
	}
	for _, kind := range []string{"read", "rmw"} {
		o := res.TxnOutcomes[kind]
		if o.Committed == 0 || o.Committed != rows[kind] {
			t.Errorf("%s: %+v committed; want the rows' %d (> 0)", kind, o, rows[kind])
		}
	}
	if o := res.TxnOutcomes["rmw"]; o.Aborted == 0 {
		t.Errorf("rmw: %+v; want some NewOrders aborted on 20 districts (errors %v)", o, res.Errors)
	}
}

// TestTxnNoneProportions: read_only_proportion -1 and tpcc's
// new_order_proportion -1 mean none in a run, not the default (the
// scenario and the generator each fill the defaults: a -1 once became 0,
// then 0.5).
func TestTxnNoneProportions(t *testing.T) {
	for _, tc := range []struct {
		spec workload.TxnSpec
		none string // the kind that must not run
	}{
		{workload.TxnSpec{Records: 100, ReadOnlyProportion: -1}, "read"},
		{workload.TxnSpec{TPCC: &workload.TPCCSpec{NewOrderProportion: -1}}, "rmw"},
	} {
		spec := tc.spec
		res, err := Run(Config{Seed: 1, World: "catenae3", Protocol: "twopl", Clients: 12, ClosedLoop: true,
			Duration: 2 * time.Second, Transactions: &spec})
		if err != nil {
			t.Fatal(err)
		}
		if o := res.TxnOutcomes[tc.none]; o.Total() != 0 || len(res.TxnOutcomes) != 1 {
			t.Errorf("%+v: outcomes %+v; want no %s transactions", tc.spec, res.TxnOutcomes, tc.none)
		}
	}
}
