package twopl_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/protocol/twopl"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// TestBankTransfers: clients in every region move money between four
// accounts (a transfer is two adds) while others audit every account in
// one read-only transaction, under message loss, duplication and
// reordering, a crashed non-coordinator and a partition. Every committed
// audit sums to zero, and at the end every region's replica holds the
// same balances, which are what the committed transfers (and some of the
// unanswered ones) add up to.
func TestBankTransfers(t *testing.T) {
	for _, proto := range protocols {
		for seed := uint64(1); seed <= 20; seed++ {
			t.Run(fmt.Sprint(proto, seed), func(t *testing.T) { bank(t, proto, seed) })
		}
	}
}

func bank(t *testing.T, proto string, seed uint64) {
	tp := topo.NewTopology(simtest.World3(t, 20, 35, 60, 5))
	cfg := twopl.Config{LockTimeout: 500 * time.Millisecond}
	if proto == twopl.OCCName {
		twopl.Optimistic(&cfg)
	}
	ks, err := twopl.NewKeyspace(tp, cfg)
	if err != nil {
		t.Fatal(err)
	}
	codec, err := protocol.NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	accounts := []string{"acct0", "acct1", "acct2", "acct3"}
	type transfer struct {
		from, to int
		amount   int64
	}
	transfers := map[wire.RequestID]transfer{}
	audits := map[wire.RequestID]bool{}
	committed := make([]int64, len(accounts))
	var answered, audited, aborted int
	s := sim.New(sim.Config{Seed: seed, Topology: tp, Factory: ks.Factory(), Codec: codec,
		Net: sim.NetConfig{Loss: 0.02, Duplicate: 0.02, Reorder: 0.05},
		OnReply: func(r *wire.Reply) {
			if tr, ok := transfers[r.ID]; ok {
				delete(transfers, r.ID)
				answered++
				if r.Err == nil {
					committed[tr.from] -= tr.amount
					committed[tr.to] += tr.amount
				} else if r.Err.Code == wire.ErrUnavailable {
					aborted++
				} else {
					transfers[r.ID] = tr // outcome unknown
				}
				return
			}
			if audits[r.ID] && r.Err == nil {
				audited++
				sum := int64(0)
				for i, res := range r.Txn {
					n, _ := strconv.ParseInt(string(res.Value), 10, 64)
					if res.Found && strconv.FormatInt(n, 10) != string(res.Value) {
						t.Errorf("seed %d: audit read %s=%q", seed, accounts[i], res.Value)
					}
					sum += n
				}
				if sum != 0 {
					t.Errorf("seed %d: audit %d sums to %d: %+v", seed, r.ID, sum, r.Txn)
				}
			}
		}})
	r := rand.New(rand.NewPCG(seed, 0x62616e6b)) // "bank"
	nodes := len(tp.Nodes)
	id := wire.RequestID(0)
	crash := wire.NodeID(1 + 2*r.IntN(3)) // a region's second node
	s.At(int64(time.Second), func() { s.Crash(crash) })
	s.At(int64(2*time.Second), func() { s.Restart(crash) })
	part := tp.ByRegion[r.IntN(3)]
	var rest []wire.NodeID
	for n := range nodes {
		if tp.RegionOf(wire.NodeID(n)) != tp.RegionOf(part[0]) {
			rest = append(rest, wire.NodeID(n))
		}
	}
	s.At(int64(2500*time.Millisecond), func() { s.Partition(part, rest) })
	s.At(int64(3500*time.Millisecond), func() { s.Unpartition(part, rest) })
	for step := 0; step < 100; step++ {
		for range 2 {
			id++
			gw := wire.NodeID(r.IntN(nodes))
			req := &wire.Request{ID: id, Client: wire.ClientID(id), Op: wire.OpTxn, Txn: &wire.Txn{}}
			if r.IntN(3) == 0 {
				req.Txn.ReadOnly = true
				for _, a := range accounts {
					req.Txn.Ops = append(req.Txn.Ops, wire.TxnOp{Kind: wire.TxnRead, Key: a})
				}
				audits[id] = true
			} else {
				from, to := r.IntN(len(accounts)), r.IntN(len(accounts)-1)
				if to >= from {
					to++
				}
				amount := int64(1 + r.IntN(100))
				req.Txn.Ops = []wire.TxnOp{{Kind: wire.TxnAdd, Key: accounts[from], Delta: -amount}, {Kind: wire.TxnAdd, Key: accounts[to], Delta: amount}}
				transfers[id] = transfer{from, to, amount}
			}
			if s.Up(gw) {
				s.Submit(tp.RegionOf(gw), gw, req)
			} else {
				delete(transfers, id)
			}
		}
		s.Run(s.Now() + int64(50*time.Millisecond))
	}
	s.SetNet(sim.NetConfig{})
	s.Run(s.Now() + int64(30*time.Second))
	if audited == 0 || answered-aborted == 0 {
		t.Fatalf("seed %d: %d audits and %d transfers committed; want some of each", seed, audited, answered-aborted)
	}
	// Every region's replica agrees, and the balances are the committed
	// transfers plus a subset of the unanswered ones.
	var final []int64
	for ri, ns := range tp.ByRegion {
		var bal []int64
		for _, a := range accounts {
			rec, ok, err := s.Engine(ns[0]).Get(a)
			if err != nil {
				t.Fatal(err)
			}
			n := int64(0)
			if ok {
				n, _ = strconv.ParseInt(string(rec.Value), 10, 64)
			}
			bal = append(bal, n)
		}
		if ri == 0 {
			final = bal
		} else if fmt.Sprint(bal) != fmt.Sprint(final) {
			t.Errorf("seed %d: region %d holds %v; region 0 %v", seed, ri, bal, final)
		}
	}
	sum := int64(0)
	for _, b := range final {
		sum += b
	}
	if sum != 0 {
		t.Errorf("seed %d: final balances %v sum to %d", seed, final, sum)
	}
	if len(transfers) == 0 && fmt.Sprint(final) != fmt.Sprint(committed) {
		t.Errorf("seed %d: final balances %v; the committed transfers add up to %v", seed, final, committed)
	}
	t.Logf("seed %d: %d audits, %d transfers committed, %d aborted, %d unanswered; balances %v", seed, audited, answered-aborted, aborted, len(transfers), final)
}
