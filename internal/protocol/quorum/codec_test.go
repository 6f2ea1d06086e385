package quorum_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/simtest"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// droppedValue is a codec with a bug: Mutate loses its record's value on
// the way, so replicas store empty values.
type droppedValue struct{ *wire.Codec }

func (c droppedValue) Decode(b []byte) (wire.Msg, error) {
	m, err := c.Codec.Decode(b)
	if mu, ok := m.(*quorum.Mutate); ok {
		mu.Rec.Value = nil
	}
	return m, err
}

// codecRun is one seeded QUORUM/QUORUM run driven through the simulator
// with codec c: one client per region, each writing unique values to and
// reading two keys, back to back, over a network that duplicates and
// reorders. It returns the linearizability checker's verdict on the
// history and the run's trace hash.
func codecRun(t *testing.T, seed uint64, c sim.Codec) (check.Result, uint64) {
	t.Helper()
	w, err := topo.Preset("meteor3")
	if err != nil {
		t.Fatal(err)
	}
	tp := topo.NewTopology(w)
	ks, err := quorum.NewKeyspace(tp, quorum.Config{})
	if err != nil {
		t.Fatal(err)
	}
	const opsPerClient = 40
	var (
		s       *sim.Sim
		h       = check.History{Init: map[string]string{}}
		pending = map[wire.ClientID]int{} // client → its op in h.Ops
		rng     = rand.New(rand.NewPCG(seed, 0x636463))
		next    func(cl wire.ClientID)
	)
	next = func(cl wire.ClientID) {
		if len(h.Ops) >= opsPerClient*len(w.Regions) {
			return
		}
		op := check.Op{Client: int64(cl), Key: []string{"a", "b"}[rng.IntN(2)], Kind: check.Read, Call: s.Now()}
		req := &wire.Request{ID: wire.RequestID(len(h.Ops) + 1), Client: cl, Op: wire.OpGet, Key: op.Key}
		if rng.IntN(2) == 0 {
			op.Kind, op.Found, op.Value = check.Write, true, fmt.Sprintf("v%d", req.ID)
			req.Op, req.Value = wire.OpPut, []byte(op.Value)
		}
		pending[cl] = len(h.Ops)
		h.Ops = append(h.Ops, op)
		region := int(cl) - 1
		s.Submit(region, tp.ByRegion[region][0], req)
	}
	s = sim.New(sim.Config{Seed: seed, Topology: tp, Factory: ks.Factory(), Codec: c,
		Net: sim.NetConfig{Duplicate: 0.1, Reorder: 0.2},
		OnReply: func(r *wire.Reply) {
			op := &h.Ops[pending[r.Client]]
			op.Return, op.Outcome = s.Now(), check.OK
			switch {
			case r.Err.OutcomeUnknown():
				op.Outcome, op.Return = check.Unknown, check.Never
			case r.Err != nil:
				op.Outcome = check.Failed
			case op.Kind == check.Read:
				op.Found, op.Value = r.Found, string(r.Value)
			}
			s.After(time.Duration(rng.IntN(20))*time.Millisecond, func() { next(r.Client) })
		}})
	for cl := range len(w.Regions) {
		s.At(0, func() { next(wire.ClientID(cl + 1)) })
	}
	s.Run(int64(time.Minute))
	for i := range h.Ops {
		if h.Ops[i].Outcome == 0 {
			t.Fatalf("seed %d: %s got no reply", seed, check.FormatOp(h.Ops[i]))
		}
	}
	return check.Linearizable(h, time.Minute), s.TraceHash()
}

// TestCodecInTheLoop: with the real codec in the simulator every message
// crosses encode → decode, and the runs pass the checker taking exactly
// the steps they take with shared pointers (the codec loses nothing the
// protocol uses). A codec that drops Mutate's value is a bug the checker
// must reject in every run.
func TestCodecInTheLoop(t *testing.T) {
	codec := sim.MustCodec(quorum.MessageTypes())
	seeds := []uint64{1, 2, 3, 4, 5}
	if s := simtest.Seed(); s != 0 {
		seeds = []uint64{s}
	}
	for _, seed := range seeds {
		replay := fmt.Sprintf("go test ./internal/protocol/quorum -run TestCodecInTheLoop -seed %d", seed)
		res, withCodec := codecRun(t, seed, codec)
		if res.Verdict != check.Pass {
			t.Errorf("seed %d, codec in the loop: %s %s: %s\nreplay: %s", seed, res.Model, res.Verdict, res.Detail, replay)
		}
		if _, shared := codecRun(t, seed, nil); shared != withCodec {
			t.Errorf("seed %d: trace %x with the codec, %x with shared pointers; want equal\nreplay: %s", seed, withCodec, shared, replay)
		}
		if res, _ := codecRun(t, seed, droppedValue{codec}); res.Verdict != check.Violation {
			t.Errorf("seed %d: a codec that drops Mutate's value: %s %s; want a violation\nreplay: %s", seed, res.Model, res.Verdict, replay)
		} else if seed == seeds[0] {
			t.Logf("seed %d, value dropped: %s", seed, res.Detail)
		}
	}
}
