package scenario

import (
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/sim"
)

// BenchmarkCodecInTheLoop measures what carrying every message through the
// codec costs the simulator: the same run (every protocol at its defaults,
// 200 closed-loop clients on globlease4, 10 simulated seconds, no check)
// with the codec and with shared pointers; ops/s is simulated operations
// per second of real time.
//
//	go test ./internal/scenario -run '^$' -bench CodecInTheLoop -benchtime 3x
func BenchmarkCodecInTheLoop(b *testing.B) {
	for _, proto := range Protocols() {
		for _, mode := range []struct {
			name  string
			codec sim.Codec
		}{{"codec", simCodec}, {"pointers", nil}} {
			b.Run(proto+"/"+mode.name, func(b *testing.B) {
				saved := simCodec
				simCodec = mode.codec
				defer func() { simCodec = saved }()
				ops, real := 0, time.Duration(0)
				for range b.N {
					res, err := Run(Config{Protocol: proto, Clients: 200, ClosedLoop: true, Duration: 10 * time.Second, Check: "none"})
					if err != nil {
						b.Fatal(err)
					}
					ops, real = ops+res.Ops, real+res.RealTime
				}
				b.ReportMetric(float64(ops)/real.Seconds(), "ops/s")
			})
		}
	}
}
