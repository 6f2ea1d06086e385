package scenario

import (
	"testing"
	"time"
)

// FuzzConfig: any YAML either fails with an error or resolves into a
// runnable simulation; nothing panics. Its seed corpus runs in every
// `go test`; `go test -fuzz FuzzConfig ./internal/scenario` explores.
func FuzzConfig(f *testing.F) {
	for _, s := range []string{
		"world: globlease4\nquorum: {read: ONE, write: ALL}\n",
		"workload: {preset: e, max_scan_length: 3}\nduration: 1s\n",
		"faults:\n  - {at: 1s, for: 1s, crash: japan}\n  - {partition: [[ireland], [japan]]}\n",
		"faults:\n  - {skew: {node: us-west-0, offset: -5ms, drift_ppm: 30}}\n",
		"net: {loss: 0.5, duplicate: 2}\n",
		"quorum: {replicas_per_region: -3}\n",
		"clients: 0\nrate: -5\n",
		"workload: [1, 2]\n",
		"faults: {crash: x}\n",
		"check: sequential\nclock: {max_offset: 1h, max_drift_ppm: 999999}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		c.EnsureDefaults()
		r, err := resolve(c)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		// Resolved configs must run; keep the run tiny.
		r.cfg.Duration = 200 * time.Millisecond
		r.cfg.Clients = min(r.cfg.Clients, 4)
		r.cfg.ClientTimeout = time.Second
		r.run()
	})
}
