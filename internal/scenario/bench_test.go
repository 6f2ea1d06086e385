package scenario

import (
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/sim"
)

// benchProtocols are the protocols BenchmarkSim measures (issue 17: each
// must run at least 200k client operations per real second).
var benchProtocols = []string{"quorum", "lease", "meteor", "sc", "rc", "cric"}

// benchConfig is BenchmarkSim's fixed scenario: meteor3 (three regions,
// Europe, US and Asia, three nodes each), closed-loop clients spread over the
// regions, YCSB B (95% reads, 1,000 keys), 10 simulated seconds, seed 1,
// no faults, the history recorded.
func benchConfig(proto string, clients int) Config {
	return Config{Seed: 1, World: "meteor3", Protocol: proto, Clients: clients, ClosedLoop: true,
		Duration: 10 * time.Second}
}

// BenchmarkSim is the simulator's speed per protocol: benchConfig with 150
// clients, every message carried through the codec (codec=on, as every
// run does) or as shared pointers (codec=off). ops/s is client operations
// per real second; the history is recorded but not checked (BenchmarkSimCheck
// times the checker).
//
//	go test ./internal/scenario -run '^$' -bench '^BenchmarkSim' -benchtime 2x -count 5
func BenchmarkSim(b *testing.B) {
	for _, proto := range benchProtocols {
		for _, mode := range []struct {
			name  string
			codec sim.Codec
		}{{"off", nil}, {"on", simCodec}} {
			b.Run(proto+"/codec="+mode.name, func(b *testing.B) {
				saved := simCodec
				simCodec = mode.codec
				defer func() { simCodec = saved }()
				var ops int
				var events uint64
				var real time.Duration
				for range b.N {
					c := benchConfig(proto, 150)
					c.skipCheck = true
					res, err := Run(c)
					if err != nil {
						b.Fatal(err)
					}
					ops, events, real = ops+res.Ops, events+res.Events, real+res.RealTime
				}
				b.ReportMetric(float64(ops)/real.Seconds(), "ops/s")
				b.ReportMetric(float64(events)/float64(b.N), "events/op")
			})
		}
	}
}

// BenchmarkSimCheck is the history checker's cost, apart from the run's:
// each protocol's history of benchConfig with 15 clients (the
// linearizability checker's search grows steeply with concurrency),
// checked against the model the protocol claims. ops/s is history
// operations checked per real second.
func BenchmarkSimCheck(b *testing.B) {
	for _, proto := range benchProtocols {
		b.Run(proto, func(b *testing.B) {
			c := benchConfig(proto, 15)
			c.skipCheck = true
			res, err := Run(c)
			if err != nil {
				b.Fatal(err)
			}
			c.EnsureDefaults()
			r, err := resolve(c)
			if err != nil {
				b.Fatal(err)
			}
			model := r.claimedModel()
			b.ResetTimer()
			for range b.N {
				out, err := check.Check(model, res.History, check.WithTimeout(60*time.Second), check.WithBudget(5_000_000))
				if err != nil {
					b.Fatal(err)
				}
				if out.Verdict != check.Pass {
					b.Fatalf("%s: %s %s", model, out.Verdict, out.Detail)
				}
			}
			b.ReportMetric(float64(len(res.History.Ops))*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}
