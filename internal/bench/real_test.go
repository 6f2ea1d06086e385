package bench

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lightcone")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/lightcone").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func noServers(t *testing.T, bin string) {
	t.Helper()
	if ps, _ := exec.Command("pgrep", "-f", bin+" server").Output(); len(bytes.TrimSpace(ps)) > 0 {
		t.Errorf("server processes left running: %s", ps)
	}
}

// TestFig4SimAndRealAgree runs the Fig. 4 baseline in virtual time and on
// a real local cluster at reduced scale: both show the claim's shape (the
// share above 500 ms is the write share), and the report shows both.
func TestFig4SimAndRealAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real clusters; skipped in -short")
	}
	bin := buildBinary(t)
	e, _ := Default().Get("quorum-globlease-fig4")
	rep, err := Run(context.Background(), e, Options{Runtime: "both", Binary: bin, Overrides: map[string]string{"duration": "8s"}})
	if err != nil {
		t.Fatal(err)
	}
	noServers(t, bin)
	runtimes := map[string]int{}
	for _, p := range rep.Points {
		runtimes[p.Runtime]++
		v, ok := metric(p.Result, MetricAbove)
		want := map[string]float64{"85% reads": 15, "95% reads": 5}[p.Series]
		slack := 2.0
		if p.Runtime == "real" {
			slack = 6 // a few hundred operations only
		}
		if !ok || v < want-slack || v > want+slack {
			t.Errorf("%s %s: %.1f%% above 500 ms; want about %g%%", p.Runtime, p.Series, v, want)
		}
	}
	if runtimes["sim"] != 2 || runtimes["real"] != 2 {
		t.Fatalf("points per runtime %v; want 2 sim and 2 real", runtimes)
	}
	dir := t.TempDir()
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	md := string(mustRead(t, filepath.Join(dir, "report.md")))
	for _, want := range []string{"| sim | 85% reads |", "| real | 85% reads |", "| sim | 95% reads |", "| real | 95% reads |", "cdf.png"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInterruptedRealRunCleansUp cancels a real run midway: no server
// process survives and the report is marked incomplete.
func TestInterruptedRealRunCleansUp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real clusters; skipped in -short")
	}
	bin := buildBinary(t)
	e, _ := Default().Get("quorum-globlease-fig5")
	ctx, cancel := context.WithCancel(context.Background())
	progress := &syncWriter{}
	go func() {
		for i := 0; i < 6000 && !strings.Contains(progress.String(), "real 1/"); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(2 * time.Second)
		cancel()
	}()
	rep, err := Run(ctx, e, Options{Runtime: "real", Binary: bin, Progress: progress})
	if err == nil {
		t.Fatal("interrupted run returned no error")
	}
	if rep == nil || !rep.Incomplete {
		t.Fatalf("report %+v; want one marked incomplete", rep)
	}
	noServers(t, bin)
	dir := t.TempDir()
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	if md := mustRead(t, filepath.Join(dir, "report.md")); !bytes.Contains(md, []byte("INCOMPLETE")) {
		t.Error("report.md not marked INCOMPLETE")
	}
}

// TestCalibrationDir2 measures the emulated links of seed 002's setting.
func TestCalibrationDir2(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real cluster; skipped in -short")
	}
	bin := buildBinary(t)
	e, _ := Default().Get("calibration-dir2")
	rep, err := Run(context.Background(), e, Options{Binary: bin, Overrides: map[string]string{"duration": "3s"}})
	if err != nil {
		t.Fatal(err)
	}
	noServers(t, bin)
	if len(rep.Calibration) != 3 {
		t.Fatalf("calibration pairs %d; want 3 (dc1-dc2, dc1-dir, dc2-dir)", len(rep.Calibration))
	}
	for _, p := range rep.Calibration {
		if !p.OK || p.Count < 10 {
			t.Errorf("%s–%s: measured %.1f ms over %d pings; configured %.1f", p.From, p.To, p.MeanMs, p.Count, p.ConfiguredMs)
		}
	}
}

// TestGlobLeaseFig4OnTheRealRuntime: the lease protocol runs unchanged on
// real processes (one per region, WAN emulated) in its own keyspace beside
// the quorum baseline: with leases primed its reads are local, and the
// requests above 500 ms are its writes (the master waits for the farthest
// lease holder), as in the simulator.
func TestGlobLeaseFig4OnTheRealRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real clusters; skipped in -short")
	}
	bin := buildBinary(t)
	e, _ := Default().Get("globlease-fig4")
	rep, err := Run(context.Background(), e, Options{Runtime: "real", Binary: bin, Overrides: map[string]string{"duration": "6s"}})
	if err != nil {
		t.Fatal(err)
	}
	noServers(t, bin)
	if len(rep.Points) != 4 {
		t.Fatalf("%d real points; want 4", len(rep.Points))
	}
	for _, p := range rep.Points {
		if p.Error != "" || p.Result == nil {
			t.Fatalf("%s: %s", p.Series, p.Error)
		}
		if !strings.HasPrefix(p.Series, "GlobLease") {
			continue
		}
		mean, ok := metric(p.Result, MetricReadMean)
		if !ok || mean > 50 {
			t.Errorf("%s: read mean %.1f ms; want local (< 50 ms) with leases primed", p.Series, mean)
		}
		above, _ := metric(p.Result, MetricAbove)
		want := map[string]float64{"GlobLease 85% reads": 15, "GlobLease 95% reads": 5}[p.Series]
		if above < want-6 || above > want+6 {
			t.Errorf("%s: %.1f%% above 500 ms; want about the write share, %g%%", p.Series, above, want)
		}
	}
}
