package scenario

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"github.com/lightcone/lightcone/internal/protocol"
	"os"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func runText(t testing.TB, c Config) (string, *Result) {
	t.Helper()
	res, err := Run(c)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var b bytes.Buffer
	if err := res.WriteText(&b, false); err != nil {
		t.Fatal(err)
	}
	return b.String(), res
}

// TestDeterminism runs one seed twice, with faults and clock errors, and
// compares the hashes of the whole output (which includes the trace hash
// of every event).
func TestDeterminism(t *testing.T) {
	c := Config{Seed: 7, World: "globlease4", Duration: 10 * time.Second, RandomFaults: true,
		Clock: Clock{MaxOffset: time.Millisecond, MaxDriftPPM: 50}, Net: Net{Loss: 0.01, Duplicate: 0.01, Reorder: 0.01}}
	a, ra := runText(t, c)
	b, _ := runText(t, c)
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	if ha != hb {
		t.Fatalf("seed 7 twice: output hashes differ (%x vs %x)\n--- first\n%s\n--- second\n%s\nreplay: go test ./internal/scenario -run TestDeterminism -v", ha[:8], hb[:8], a, b)
	}
	c.Seed = 8
	other, _ := runText(t, c)
	if other == a {
		t.Fatalf("seeds 7 and 8 printed the same output: the seed is not used")
	}
	if ra.Events < 10000 {
		t.Fatalf("run processed %d events; want a real workload", ra.Events)
	}
}

// TestGloblease4OneAllShape is the Cassandra line of GlobLease Fig. 4:
// R=ONE/W=ALL at 95% reads. Reads are local, every write waits for the
// farthest region (≥ 500ms RTT in globlease4), so about 5% of requests
// exceed 500ms.
func TestGloblease4OneAllShape(t *testing.T) {
	_, res := runText(t, Config{World: "globlease4", Set: []string{"read=ONE", "write=ALL"}, WorkloadPreset: "b", Duration: 20 * time.Second})
	var all Row
	for _, r := range res.Rows {
		switch {
		case r.Region == "all":
			all = r
		case r.Op == "read" && r.P99 > 5:
			t.Errorf("%s read p99 = %.1fms; want local (< 5ms)", r.Region, r.P99)
		case r.Op == "update" && (r.P50 < 500 || r.P50 < r.Floor):
			t.Errorf("%s update p50 = %.1fms (floor %.1f); want ≥ the largest RTT, 500ms", r.Region, r.P50, r.Floor)
		}
	}
	if all.Above < 0.04 || all.Above > 0.06 {
		t.Errorf("share above 500ms = %.2f%%; want about 5%%", 100*all.Above)
	}
	if res.Check == nil || res.Check.Verdict != "pass" || res.Check.Model != "regular" {
		t.Errorf("check = %+v; want regular: pass", res.Check)
	}
}

// TestWarmupIsNotMeasured: with a warm-up, the operations started and the
// messages sent before it are left out. A lease run starts with no leases,
// so after the warm-up a smaller share of reads renews one.
func TestWarmupIsNotMeasured(t *testing.T) {
	c := Config{World: "globlease4", Protocol: "lease", Duration: 30 * time.Second, Check: "none"}
	_, cold := runText(t, c)
	c.Warmup = 15 * time.Second
	text, warm := runText(t, c)
	if !strings.Contains(text, "after a 15s warm-up") {
		t.Errorf("report does not mention the warm-up:\n%s", text)
	}
	var late int64 // operations completing in the second half
	for _, s := range warm.Seconds {
		if s.T >= 15 {
			late += s.Count
		}
	}
	if warm.Ops == 0 || int64(warm.Ops) > late || warm.Ops >= cold.Ops {
		t.Errorf("ops after warm-up = %d; want between 1 and %d (completed after 15s), below the cold run's %d", warm.Ops, late, cold.Ops)
	}
	renewsPerRead := func(r *Result) float64 {
		var renews, reads float64
		for _, m := range r.Messages {
			if m.Kind == "lease.renew" {
				renews = float64(m.Count)
			}
		}
		for _, row := range r.Rows {
			if row.Op == "read" {
				reads += float64(row.Count)
			}
		}
		return renews / reads
	}
	if w, c := renewsPerRead(warm), renewsPerRead(cold); !(w > 0 && w < c) {
		t.Errorf("renewals per read: %.3f after the warm-up, %.3f from cold; want fewer (but some) once leases are held", w, c)
	}
}

// TestBadInput: every invalid config or flag value is one clear error
// naming the field (and the valid values where there is a set), never a
// panic.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		yaml string
		want string
	}{
		{name: "world", c: Config{World: "mars"}, want: "globlease4"},
		{name: "protocol", c: Config{Protocol: "raft"}, want: `protocol: unknown protocol "raft" (valid: ` + strings.Join(protocol.Names(), ", ") + ")"},
		{name: "read level", c: Config{Set: []string{"read=MOST"}}, want: "unknown consistency level \"MOST\" (valid: ONE, TWO"},
		{name: "negative offset", c: Config{Set: []string{"max_clock_offset=-1ms"}}, want: "max_clock_offset = -1ms; must not be negative"},
		{name: "replicas", c: Config{Set: []string{"replicas_per_region=9"}}, want: "replicas_per_region[0] = 9; must be between 0 and the region's 3 nodes"},
		{name: "foreign setting", c: Config{Set: []string{"lease_length=1s"}}, want: `protocol quorum has no setting "lease_length"`},
		{name: "foreign yaml setting", yaml: "protocol: quorum\nsettings: {lease_length: 1s, passive: true}\n", want: `line 2: settings: protocol quorum has no setting "lease_length" (valid: clock_probe_interval, commit_wait, max_clock_offset, max_drift_ppm, no_commit_wait, read, read_timeout, replicas_per_region, speculative_retry, write, write_order, write_timeout)`},
		{name: "settings of another protocol", c: Config{Protocol: "lease", Settings: new(struct{ X int })}, want: "settings of type"},
		{name: "workload", c: Config{WorkloadPreset: "z"}, want: "workload:"},
		{name: "check", c: Config{Check: "snapshot"}, want: "check: unknown model \"snapshot\" (valid: auto, linearizable"},
		{name: "loss", c: Config{Net: Net{Loss: 2}}, want: "net.loss: 2"},
		{name: "clients", c: Config{Clients: -1}, want: "clients: -1"},
		{name: "warmup", c: Config{Warmup: 2 * time.Second}, want: "warmup: 2s; must be at least 0 and shorter than duration 1s"},
		{name: "rate step rate", c: Config{RateSteps: []RateStep{{At: 500 * time.Millisecond}}}, want: "rate_steps[0]: rate 0; must be > 0 requests/s"},
		{name: "rate step at", c: Config{RateSteps: []RateStep{{At: time.Second, Rate: 10}}}, want: "rate_steps[0]: at 1s; must be after 0s and before duration 1s"},
		{name: "rate step order", c: Config{RateSteps: []RateStep{{At: 500 * time.Millisecond, Rate: 10}, {At: 200 * time.Millisecond, Rate: 20}}}, want: "rate_steps[1]: at 200ms; must be after rate_steps[0] (at 500ms)"},
		{name: "rate step closed loop", c: Config{ClosedLoop: true, RateSteps: []RateStep{{At: 500 * time.Millisecond, Rate: 10}}}, want: "rate_steps: need an open-loop rate > 0"},
		{name: "yaml rate step", yaml: "rate_steps: [{at: 0.5s, rat: 10}]\n", want: `line 1: unknown field "rat" in rate_steps[0] (did you mean "rate"?); valid fields: at, rate`},
		{name: "fault node", c: Config{Faults: []Fault{{Crash: "pluto-0"}}}, want: `faults[0]: crash: unknown node or region "pluto-0"`},
		{name: "fault kinds", c: Config{Faults: []Fault{{Crash: "japan", Net: &Net{}}}}, want: "exactly one of crash, partition, net, skew"},
		{name: "yaml unknown field", yaml: "wrld: globlease4\n", want: `line 1: unknown field "wrld" in scenario (did you mean "world"?); valid fields: seed, world, protocol, settings, workload, transactions, clients,`},
		{name: "yaml workload field", yaml: "workload:\n  preset: a\n  read_proportoin: 0.5\n", want: `line 3: unknown field "read_proportoin" in workload (did you mean "read_proportion"?); valid fields: preset, `},
		{name: "yaml bad duration", yaml: "duration: forever\n", want: "line 1: duration: cannot unmarshal !!str `forever` into time.Duration"},
		{name: "yaml proportions", yaml: "workload:\n  preset: a\n  read_proportion: 0.9\n", want: "proportion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			if tc.yaml != "" {
				var err error
				c, err = Parse([]byte(tc.yaml))
				if err != nil {
					if !strings.Contains(err.Error(), tc.want) {
						t.Fatalf("Parse error = %q; want it to contain %q", err, tc.want)
					}
					return
				}
			}
			c.Duration = time.Second
			_, err := Run(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run error = %v; want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestRateSteps: the offered rate follows the steps, second by second,
// from the step on (not a client's pre-step gap later), and the report
// names them.
func TestRateSteps(t *testing.T) {
	c := Config{World: "local3", Clients: 300, Rate: 100, Duration: 30 * time.Second, Check: "none",
		RateSteps: []RateStep{{At: 10 * time.Second, Rate: 400}, {At: 20 * time.Second, Rate: 200}}}
	out, res := runText(t, c)
	perSec := make([]int64, 30)
	for _, s := range res.Seconds {
		if s.Op == "read" || s.Op == "update" {
			perSec[s.T] += s.Count
		}
	}
	for _, tc := range []struct {
		from, to int
		want     float64
	}{{1, 10, 100}, {10, 20, 400}, {21, 30, 200}} {
		var n int64
		for s := tc.from; s < tc.to; s++ {
			n += perSec[s]
		}
		if got := float64(n) / float64(tc.to-tc.from); got < 0.85*tc.want || got > 1.15*tc.want {
			t.Errorf("seconds [%d, %d): %.0f requests/s; want about %g (counts %v)", tc.from, tc.to, got, tc.want, perSec)
		}
	}
	// 300 clients at 100/s: each waits 3 s on average between arrivals.
	// Without redrawing at the step, the first second after it would still
	// run at about the old rate.
	if perSec[10] < 300 {
		t.Errorf("second 10 (the step to 400/s): %d requests; want the new rate at once", perSec[10])
	}
	if !strings.Contains(out, "rate=100/s (open loop), 400/s from 10s, 200/s from 20s") {
		t.Errorf("report lacks the rate steps:\n%s", out)
	}
	if len(res.RateSteps) != 2 {
		t.Errorf("Result.RateSteps = %v; want the config's two", res.RateSteps)
	}
}

// BenchmarkGloblease4Minute is the simulator's speed target: 60 simulated
// seconds of globlease4 (12 nodes), 50 clients, 1,000 requests/s, the
// GlobLease workload shape (95% reads, 10,000 keys), history recorded and
// checked. Target: < 2s per op on a 2-core machine.
func BenchmarkGloblease4Minute(b *testing.B) {
	for _, check := range []string{"none", "auto"} {
		var wl yaml.Node
		if err := wl.Encode(map[string]any{"preset": "b", "record_count": 10000, "value_size": 10240}); err != nil {
			b.Fatal(err)
		}
		b.Run("check="+check, func(b *testing.B) {
			var ev uint64
			for i := 0; i < b.N; i++ {
				res, err := Run(Config{World: "globlease4", Clients: 50, Rate: 1000, Duration: 60 * time.Second,
					Set: []string{"replicas_per_region=3", "read=ONE", "write=ALL"}, Workload: wl, Check: check,
					Seed: uint64(i + 1)})
				if err != nil {
					b.Fatal(err)
				}
				ev = res.Events
			}
			b.ReportMetric(float64(ev), "events/op")
		})
	}
}

func ExampleResult_WriteText() {
	res, err := Run(Config{World: "local3", Duration: 2 * time.Second, Clients: 3, Rate: 30})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Check.Model, res.Check.Verdict)
	// Output: linearizable pass
}

// TestDocExamples keeps the documented configs loadable and runnable.
func TestDocExamples(t *testing.T) {
	for _, path := range []string{"../../docs/examples/fig4-cassandra.yaml", "../../docs/examples/faults.yaml"} {
		c, err := Load(path)
		if err != nil {
			t.Fatalf("Load(%q): %v", path, err)
		}
		c.Duration = 50 * time.Second
		res, err := Run(c)
		if err != nil {
			t.Fatalf("Run(%q): %v", path, err)
		}
		if res.Check != nil && res.Check.Verdict != "pass" {
			t.Errorf("%s: check %s: %s", path, res.Check.Verdict, res.Check.Detail)
		}
	}
}

// TestDocTxnExample: docs/examples/txn-one-node.yaml, run from the
// repository's root as docs/sim.md says, records transactions and passes
// the serializable check.
func TestDocTxnExample(t *testing.T) {
	t.Chdir("../..")
	c, err := Load("docs/examples/txn-one-node.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.Duration = 2 * time.Second
	res, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Txns) == 0 || res.Check == nil || res.Check.Model != "serializable" || res.Check.Verdict != "pass" {
		t.Errorf("%d transactions, check %+v; want some, and serializable passing", len(res.Txns), res.Check)
	}
}

// TestDocSimReference keeps docs/sim.md's examples valid and its
// settings reference complete: every yaml block loads and runs, and every
// registered protocol has a block that lists each of its settings.
func TestDocSimReference(t *testing.T) {
	raw, err := os.ReadFile("../../docs/sim.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]map[string]bool{}
	rest := string(raw)
	for {
		var block string
		var ok bool
		if _, rest, ok = strings.Cut(rest, "```yaml\n"); !ok {
			break
		}
		if block, rest, ok = strings.Cut(rest, "```"); !ok {
			t.Fatal("docs/sim.md: unterminated yaml block")
		}
		c, err := Parse([]byte(block))
		if err != nil {
			t.Fatalf("docs/sim.md example: %v\n%s", err, block)
		}
		if c.Duration == 0 {
			c.Duration = 2 * time.Second
		} else {
			c.Duration = 50 * time.Second
		}
		if _, err := Run(c); err != nil {
			t.Fatalf("docs/sim.md example does not run: %v\n%s", err, block)
		}
		var m map[string]any
		_ = c.SettingsYAML.Decode(&m)
		if documented[c.Protocol] == nil {
			documented[c.Protocol] = map[string]bool{}
		}
		for k := range m {
			documented[c.Protocol][k] = true
		}
	}
	for _, d := range protocol.All() {
		for _, name := range protocol.SettingNames(d) {
			if !documented[d.Name][name] {
				t.Errorf("docs/sim.md documents no setting %q of protocol %s", name, d.Name)
			}
		}
	}
}

func mustParse(t *testing.T, doc string) Config {
	t.Helper()
	c, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
