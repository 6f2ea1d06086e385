package check

import (
	"math/rand"
	"testing"
)

func TestDbg(t *testing.T) {
	cfg := genCfg{clients: 20, perClient: 50, keys: 100, pRead: 0.5, pDelete: 0.1, pUnknown: 0.02, maxDur: 5e6, maxGap: 1e6}
	h := genLinearizable(rand.New(rand.NewSource(0)), cfg)
	s := newSeq(h)
	s.readsFrom()
	s.buildGraph()
	s.saturate()
	dbgHook = func(tr *searcher) {
		if len(tr.trail) != 292 {
			return
		}
		dbgHook = nil
		for c := range s.chains {
			i := tr.headOp(c)
			if i < 0 {
				continue
			}
			t.Logf("head c%d: %s pending=%d optional=%v src=%d", c, FormatOp(s.ops[i]), tr.pending[i], s.optional[i], s.src[i])
			for _, p := range s.preds[i] {
				if !tr.done[p] {
					t.Logf("    waits %s (%v)", FormatOp(s.ops[p]), s.edges[[2]int32{p, i}])
				}
			}
			if !s.isRead(i) {
				if w := tr.curW[s.key[i]]; w >= 0 && tr.readersLeft[w] > 0 {
					t.Logf("    key held by %s with %d readers left", FormatOp(s.ops[w]), tr.readersLeft[w])
				}
			} else if s.src[i] >= 0 {
				t.Logf("    src %s done=%v; key by %d", FormatOp(s.ops[s.src[i]]), tr.done[s.src[i]], tr.curW[s.key[i]])
			}
		}
	}
	r := s.search(100000)
	t.Log(r)
}
