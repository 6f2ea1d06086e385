package realrun

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/localcluster"
	"github.com/lightcone/lightcone/internal/protocol"
	_ "github.com/lightcone/lightcone/internal/protocol/all"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
	"github.com/lightcone/lightcone/internal/workload"
)

// startLocal3 builds the binary and starts a local3 cluster, stopped at
// the end of the test.
func startLocal3(t *testing.T) (*localcluster.Cluster, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("multi-process cluster; skipped in -short")
	}
	bin := filepath.Join(t.TempDir(), "lightcone")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/lightcone").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	w, err := topo.Resolve("local3")
	if err != nil {
		t.Fatal(err)
	}
	w.NodesPerRegion = 1
	c, err := localcluster.Start(context.Background(), localcluster.Options{World: w, Binary: bin})
	if err != nil {
		t.Fatalf("localcluster.Start: %v", err)
	}
	t.Cleanup(func() {
		c.Stop()
		if out, _ := exec.Command("pgrep", "-f", bin+" server").Output(); len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("server processes left running: %s", out)
		}
	})
	return c, bin
}

func preset(t *testing.T, name string, records int) workload.Spec {
	t.Helper()
	s, err := workload.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	s.RecordCount = records
	return s
}

func TestRunOnLocal3(t *testing.T) {
	c, _ := startLocal3(t)
	t.Run("spec-errors", func(t *testing.T) { testSpecErrors(t, c) })
	for _, tc := range []struct {
		workload string
		rate     float64 // per client; 0: closed loop
		ops      []string
	}{
		{"a", 50, []string{"read", "update"}},
		{"f", 0, []string{"read", "rmw"}},
	} {
		t.Run("workload-"+tc.workload, func(t *testing.T) {
			var progress bytes.Buffer
			// The default keyspace, as the registry builds it: its policy
			// line and floors.
			w, err := topo.Resolve("local3")
			if err != nil {
				t.Fatal(err)
			}
			w.NodesPerRegion = 1
			_, ks, err := protocol.Spec{Protocol: "quorum", Set: []string{"read=QUORUM", "write=QUORUM"}}.Build(topo.NewTopology(w))
			if err != nil {
				t.Fatal(err)
			}
			res, hists, err := Run(context.Background(), c, Spec{
				Workload: preset(t, tc.workload, 100), ClientsPerRegion: 2, RatePerClient: tc.rate,
				Duration: 2 * time.Second, Read: wire.Quorum, Write: wire.Quorum, Progress: &progress,
				Policy: ks.Describe(), Floor: ks.Floor,
			})
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, progress.String())
			}
			if !strings.Contains(progress.String(), "loaded 100 records at ALL") {
				t.Errorf("progress lacks the load line:\n%s", progress.String())
			}
			if res.Ops == 0 || len(res.Errors) != 0 {
				t.Errorf("Ops = %d, Errors = %v; want some operations and no errors", res.Ops, res.Errors)
			}
			if want := ks.Describe() + " (real runtime)"; res.Policy != want {
				t.Errorf("Policy = %q; want %q", res.Policy, want)
			}
			if res.World != "local3" || res.Clients != 6 || res.SimSeconds != 2 || res.Seed != 1 || res.Rate != 6*tc.rate {
				t.Errorf("Result header = world %s, clients %d, %gs, seed %d, rate %g; want local3, 6, 2s, 1, %g",
					res.World, res.Clients, res.SimSeconds, res.Seed, res.Rate, 6*tc.rate)
			}
			if len(res.Seconds) == 0 || len(res.Histograms) != len(hists) {
				t.Errorf("Result has %d seconds of time series and %d histograms; want some, and %d", len(res.Seconds), len(res.Histograms), len(hists))
			}
			var got []string
			for _, r := range res.Rows {
				got = append(got, r.Region+"/"+r.Op)
				if r.Count <= 0 {
					t.Errorf("row %s/%s: count %d", r.Region, r.Op, r.Count)
				}
				if hists[r.Region+"/"+r.Op].TotalCount() != r.Count {
					t.Errorf("histogram %s/%s holds %d values; the row counts %d", r.Region, r.Op, hists[r.Region+"/"+r.Op].TotalCount(), r.Count)
				}
				if r.Region == "all" {
					continue
				}
				// QUORUM in local3 needs one other region: 1ms there and back;
				// a read-modify-write pays it twice.
				want := 2.0
				if r.Op == "rmw" {
					want = 4
				}
				if r.Floor != want {
					t.Errorf("row %s/%s: floor %gms; want %gms", r.Region, r.Op, r.Floor, want)
				}
				// A floor bounds every operation, the fastest included
				// (µs histograms with 3 significant digits).
				if min := float64(hists[r.Region+"/"+r.Op].Min()) / 1e3; min < r.Floor*0.999 {
					t.Errorf("row %s/%s: fastest operation %gms below the floor %gms", r.Region, r.Op, min, r.Floor)
				}
				if tc.rate > 0 && r.IntendedP99 < r.P99*0.95 {
					t.Errorf("row %s/%s: intended p99 %gms below service p99 %gms", r.Region, r.Op, r.IntendedP99, r.P99)
				}
			}
			var want []string
			for _, reg := range []string{"a", "b", "c"} {
				for _, op := range tc.ops {
					want = append(want, reg+"/"+op)
				}
			}
			want = append(want, "all/all")
			if !slices.Equal(got, want) {
				t.Errorf("rows = %v; want %v", got, want)
			}
		})
	}
}

// TestRunCancelled cancels a long run after a second: Run must return
// promptly with what it measured and an error wrapping context.Canceled.
func TestRunCancelled(t *testing.T) {
	c, _ := startLocal3(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	start := time.Now()
	res, hists, err := Run(ctx, c, Spec{Workload: preset(t, "b", 100), ClientsPerRegion: 2, Duration: time.Minute,
		Read: wire.One, Write: wire.All})
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run returned %s after the start; want soon after the cancellation at 1.5s", d)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v; want an error wrapping context.Canceled", err)
	}
	if res == nil || res.Ops == 0 || len(res.Rows) == 0 || hists["all/all"] == nil {
		t.Fatalf("Run returned no partial result: %+v", res)
	}
	if res.SimSeconds <= 0 || res.SimSeconds >= 60 {
		t.Errorf("SimSeconds = %g; want the time measured before the cancellation", res.SimSeconds)
	}
	if len(res.Errors) != 0 {
		t.Errorf("Errors = %v; requests cut short by the cancellation are not errors", res.Errors)
	}
	// The cluster is still usable afterwards.
	if err := c.Nodes()[0].Client.Do(context.Background(), "LC.GET", "x", "LEVEL", "ONE").Err(); err != nil && err.Error() != "redis: nil" {
		t.Errorf("cluster unusable after a cancelled run: %v", err)
	}
}

func testSpecErrors(t *testing.T, c *localcluster.Cluster) {
	for _, tc := range []struct {
		s    Spec
		want string
	}{
		{Spec{Workload: preset(t, "a", 10), ClientsPerRegion: -1}, "clients per region"},
		{Spec{Workload: preset(t, "a", 10), RatePerClient: -1}, "rate per client"},
		{Spec{Workload: workload.Spec{ReadProportion: 2}}, "workload"},
	} {
		if _, _, err := Run(context.Background(), c, tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%+v) = %v; want an error containing %q", tc.s, err, tc.want)
		}
	}
}
