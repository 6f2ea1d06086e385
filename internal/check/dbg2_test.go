package check

import (
	"math/rand"
	"sort"
	"testing"
)

func TestDbg2(t *testing.T) {
	cfg := genCfg{clients: 20, perClient: 50, keys: 100, pRead: 0.5, pDelete: 0.1, pUnknown: 0.02, maxDur: 5e6, maxGap: 1e6}
	h := genLinearizable(rand.New(rand.NewSource(0)), cfg)
	var ops []Op
	for _, o := range h.Ops {
		if o.Key == "k77" {
			ops = append(ops, o)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	for _, o := range ops {
		t.Log(FormatOp(o), o.Outcome)
	}
	t.Log(h.Init["k77"])
}
