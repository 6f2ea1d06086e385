package bench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCatalogHasTheQuorumBaseline(t *testing.T) {
	c := Default()
	for _, n := range []string{"quorum-globlease-fig4", "quorum-globlease-fig5", "quorum-meteor-controlled"} {
		e, err := c.Get(n)
		if err != nil {
			t.Fatal(err)
		}
		o := Options{}
		if err := e.Validate(&o); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := c.Get("nope"); err == nil || !strings.Contains(err.Error(), "quorum-globlease-fig4") {
		t.Errorf("Get(nope) = %v; want an error listing the valid names", err)
	}
}

func TestBadOptions(t *testing.T) {
	e, _ := Default().Get("quorum-globlease-fig4")
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Runtime: "cloud"}, `unknown runtime "cloud" (valid: sim, real, both)`},
		{Options{Overrides: map[string]string{"colour": "blue"}}, "unknown parameter (valid: clients, duration"},
		{Options{Overrides: map[string]string{"duration": "-3s"}}, "want a positive duration"},
		{Options{Overrides: map[string]string{"read": "MOST"}}, `unknown consistency level "MOST"`},
		{Options{Overrides: map[string]string{"replicas_per_region": "9"}}, "replicas_per_region[0] = 9"},
	} {
		o := tc.o
		if err := e.Validate(&o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v; want it to contain %q", tc.o, err, tc.want)
		}
	}
}

// TestRunWritesReport runs the Fig. 4 baseline briefly in virtual time and
// checks the results directory and the shape of the result.
func TestRunWritesReport(t *testing.T) {
	e, _ := Default().Get("quorum-globlease-fig4")
	rep, err := Run(context.Background(), e, Options{Overrides: map[string]string{"duration": "20s"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results.json", "rows.csv", "seconds.csv", "cdf.csv", "report.md", "cdf.png", "region-bars.png", "timeseries.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"GlobLease paper (seed 003)", "| sim | 85% reads |", "| sim | 95% reads |", "15% (share of requests above 500 ms)", "regular: pass"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// The shape of the claim: the share above 500 ms is the write share.
	for _, p := range rep.Points {
		v, ok := metric(p.Result, MetricAbove)
		want := map[string]float64{"85% reads": 15, "95% reads": 5}[p.Series]
		if !ok || v < want-2 || v > want+2 {
			t.Errorf("%s: %.1f%% above 500 ms; want about %g%%", p.Series, v, want)
		}
	}
}

func TestInterruptedRunIsMarkedIncomplete(t *testing.T) {
	e, _ := Default().Get("quorum-meteor-controlled")
	ctx, cancel := context.WithCancel(context.Background())
	done := 0
	progress := &syncWriter{}
	go func() {
		// Cancel once the second point has started.
		for i := 0; i < 1000 && !strings.Contains(progress.String(), "sim 2/"); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	rep, err := Run(ctx, e, Options{Overrides: map[string]string{"duration": "5s"}, Progress: progress})
	if err == nil {
		t.Fatal("Run of a cancelled context returned no error")
	}
	if rep == nil || !rep.Incomplete {
		t.Fatalf("report %+v; want a partial report marked incomplete", rep)
	}
	done = len(rep.Points)
	if done == len(e.Series)*len(e.Sweep.Values) {
		t.Fatalf("all %d points ran despite the cancellation", done)
	}
	dir := t.TempDir()
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(md), "INCOMPLETE") {
		t.Error("report.md of an interrupted run is not marked INCOMPLETE")
	}
}

type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestListedRuntimesAreAccepted: every runtime `bench list` shows for an
// experiment passes its validation, and the others are refused.
func TestListedRuntimesAreAccepted(t *testing.T) {
	cat := Default()
	for _, n := range cat.Names() {
		e, _ := cat.Get(n)
		for _, rt := range Runtimes() {
			o := Options{Runtime: rt}
			err := e.Validate(&o)
			if listed := slices.Contains(e.Runtimes(), rt); listed != (err == nil) {
				t.Errorf("%s: runtime %s listed=%v but Validate = %v", n, rt, listed, err)
			}
		}
	}
}
