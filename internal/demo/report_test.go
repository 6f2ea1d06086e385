package demo

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/topo"
)

// TestReportIsNarrow: the report is one table per keyspace, no line wider
// than reportWidth; a legend says what floor, light and "-" mean; each
// row gives the floor on the emulated WAN and at the speed of light; and
// a phase that completed far fewer operations than offered says why.
func TestReportIsNarrow(t *testing.T) {
	w, err := topo.Resolve("globlease4")
	if err != nil {
		t.Fatal(err)
	}
	tp := topo.NewTopology(w)
	o := Options{ClientsPerRegion: 4, RatePerClient: 20, PhaseDuration: 10 * time.Second}
	offered := len(w.Regions) * 4 * 20 * 10
	var results []*phaseResult
	for i, ph := range Phases() {
		sp, err := ph.spec()
		if err != nil {
			t.Fatal(err)
		}
		d, settings, err := sp.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		ks, err := d.Build(tp, settings)
		if err != nil {
			t.Fatal(err)
		}
		hists := map[string]*hdrhistogram.Histogram{}
		for _, rg := range w.Regions[1:] { // the first region measured nothing
			for _, op := range []string{"read", "update"} {
				h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
				_ = h.RecordValue(200_000) // 200 ms
				hists[rg.Name+"/"+op] = h
			}
		}
		ops := offered
		if i == 1 {
			ops = offered / 4
		}
		results = append(results, &phaseResult{phase: ph, ks: ks, res: &scenario.Result{Ops: ops}, hists: hists})
	}
	var out bytes.Buffer
	report(&out, w, o, results)
	text := out.String()
	for i, line := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(line); n > reportWidth {
			t.Errorf("line %d is %d columns wide (most %d):\n%s", i+1, n, reportWidth, line)
		}
	}
	for _, want := range []string{"  floor     the least time", "  light     the same round trips at the speed of light", "  -         no operation"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks the legend line %q:\n%s", want, text)
		}
	}
	for _, r := range results {
		if got := strings.Count(text, "\n"+r.phase.Name+" (keyspace "+r.phase.keyspace+")\n"); got != 1 {
			t.Errorf("report has %d tables for %s; want 1:\n%s", got, r.phase.Name, text)
		}
	}
	// QUORUM/QUORUM's write from the last region: both floors, the speed
	// of light's below the emulated one.
	qq := results[1]
	if !strings.Contains(qq.phase.Name, "QUORUM/QUORUM") {
		t.Fatalf("phase 1 is %s; want quorum QUORUM/QUORUM", qq.phase.Name)
	}
	reg := len(w.Regions) - 1
	emulated := scenario.OpFloor(qq.ks.Floor, reg, "update", w.EmulatedOneWay)
	light := scenario.OpFloor(qq.ks.Floor, reg, "update", w.LightOneWay)
	if !(0 < light && light < emulated) {
		t.Fatalf("QUORUM write floor from %s: emulated %v, light %v; want 0 < light < emulated", w.Regions[reg].Name, emulated, light)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		rows[strings.Join(strings.Fields(line), " ")] = true
	}
	row := fmt.Sprintf("%s write 200.1 200.1 %.1f %.1f", w.Regions[reg].Name, float64(emulated)/1e6, float64(light)/1e6)
	if !rows[row] {
		t.Errorf("report lacks the row %q:\n%s", row, text)
	}
	if row := w.Regions[0].Name + " read - - 0.0 0.0"; !rows[row] {
		t.Errorf("report lacks the row %q, with - for a region that measured nothing:\n%s", row, text)
	}
	if n := strings.Count(text, "why fewer operations"); n != 1 || !strings.Contains(text, fmt.Sprintf("why fewer operations: %d of about %d offered", offered/4, offered)) ||
		!strings.Contains(strings.Join(strings.Fields(text), " "), "ms of it its floor, which no operation escapes") {
		t.Errorf("report explains fewer operations %d times; want once, for %s:\n%s", n, qq.phase.Name, text)
	}
}
