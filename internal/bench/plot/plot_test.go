package plot

import (
	"bytes"
	"errors"
	"image/png"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testCaption = "Experiment read-latency-vs-lease, world 3-region (us-east, eu-west, ap-south; RTT 70-230 ms), " +
	"workload ycsb-b (95% reads, zipf 0.99, 1000 ops/s per client), seed 42. Lightcone bench; quantiles from HDR histograms."

func testMeta(title, xl, yl string) Meta {
	return Meta{Title: title, Caption: testCaption, XLabel: xl, YLabel: yl}
}

// latencyCDF returns the empirical CDF of n samples drawn from a lognormal
// around medianMs, with a slow tail, from a seeded source.
func latencyCDF(label string, seed int64, n int, medianMs, sigma float64) Series {
	rng := rand.New(rand.NewSource(seed))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = medianMs * math.Exp(sigma*rng.NormFloat64())
		if rng.Intn(100) == 0 {
			xs[i] *= 8 // a tail of slow requests
		}
	}
	sortFloats(xs)
	ys := make([]float64, n)
	for i := range ys {
		ys[i] = float64(i+1) / float64(n)
	}
	return Series{Label: label, X: xs, Y: ys}
}

func sortFloats(xs []float64) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// examples returns one figure of each kind, written by call into dir.
func examples() map[string]func(path string) error {
	cdf := []Series{
		latencyCDF("GlobLease, local lease", 1, 2000, 0.4, 0.5),
		latencyCDF("GlobLease, remote master", 2, 2000, 75, 0.25),
		latencyCDF("quorum read", 3, 2000, 160, 0.2),
	}
	ratios := []float64{0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99}
	sweep := func(label string, f func(r float64) float64) Series {
		s := Series{Label: label}
		for _, r := range ratios {
			s.X = append(s.X, r*100)
			s.Y = append(s.Y, f(r))
		}
		return s
	}
	lines := []Series{
		sweep("p50", func(r float64) float64 { return 2 + 60*(1-r) }),
		sweep("p99", func(r float64) float64 { return 90 + 120*(1-r) }),
		sweep("p99.9", func(r float64) float64 { return 180 + 150*(1-r) }),
	}
	var ts []Series
	{
		rng := rand.New(rand.NewSource(7))
		p99 := Series{Label: "p99 latency (ms)"}
		nodes := Series{Label: "master replicas"}
		for t := 0.0; t <= 120; t += 1 {
			load := 1.0
			if t >= 50 {
				load = 2.5
			}
			repl := 3.0
			if t >= 62 {
				repl = 5
			}
			v := 40*load/repl*3 + 8*rng.Float64()
			if t >= 50 && t < 62 {
				v += 60 * math.Exp(-(t-50)/6)
			}
			p99.X, p99.Y = append(p99.X, t), append(p99.Y, v)
			nodes.X, nodes.Y = append(nodes.X, t), append(nodes.Y, repl*10)
		}
		ts = []Series{p99, nodes}
	}
	regions := []string{"us-east", "eu-west", "ap-south", "sa-east"}
	bars := []Series{
		{Label: "p50", Y: []float64{1.2, 1.4, 2.1, 1.8}},
		{Label: "p99", Y: []float64{82, 95, 160, 140}},
		{Label: "RTT floor", Y: []float64{70, 80, 150, 120}},
	}
	return map[string]func(string) error{
		"cdf_log.png": func(p string) error {
			return CDF(p, testMeta("Read latency CDF by protocol", "latency (ms, log scale)", "fraction of reads"), cdf, true)
		},
		"cdf_log_wide.png": func(p string) error {
			wide := []Series{
				latencyCDF("local read", 4, 1000, 0.3, 0.3),
				latencyCDF("cross-region write", 5, 1000, 180, 0.35),
			}
			return CDF(p, testMeta("Latency from 0.2 ms to 600 ms", "latency (ms, log scale)", "fraction of ops"), wide, true)
		},
		"cdf_linear.png": func(p string) error {
			return CDF(p, testMeta("Read latency CDF by protocol", "latency (ms)", "fraction of reads"), cdf, false)
		},
		"lines.png": func(p string) error {
			return Lines(p, testMeta("Read latency vs read ratio", "reads (% of ops)", "latency (ms)"), lines)
		},
		"timeseries.png": func(p string) error {
			return TimeSeries(p, testMeta("Elasticity under a load step", "time (s)", "value"), ts,
				[]Mark{{X: 50, Label: "load x2.5"}, {X: 62, Label: "scale-out done"}})
		},
		"bars.png": func(p string) error {
			return Bars(p, testMeta("Write latency by region", "client region", "latency (ms)"), regions, bars)
		},
	}
}

func TestExamples(t *testing.T) {
	dirs := []string{t.TempDir()}
	if keep := os.Getenv("PLOT_KEEP"); keep != "" {
		dirs = append(dirs, keep)
	}
	for name, write := range examples() {
		t.Run(name, func(t *testing.T) {
			for _, dir := range dirs {
				path := filepath.Join(dir, name)
				if err := write(path); err != nil {
					t.Fatalf("writing %s: %v", path, err)
				}
				checkPNG(t, path, 7, 4.5)
			}
		})
	}
}

func checkPNG(t *testing.T, path string, wIn, hIn float64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("png.Decode(%s): %v", path, err)
	}
	got := img.Bounds().Size()
	wantW, wantH := int(math.Round(wIn*dpi)), int(math.Round(hIn*dpi))
	if abs(got.X-wantW) > 1 || abs(got.Y-wantH) > 1 {
		t.Errorf("%s is %dx%d px; want %dx%d", path, got.X, got.Y, wantW, wantH)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestDeterministic(t *testing.T) {
	dir := t.TempDir()
	for name, write := range examples() {
		a, b := filepath.Join(dir, "a-"+name), filepath.Join(dir, "b-"+name)
		if err := write(a); err != nil {
			t.Fatal(err)
		}
		if err := write(b); err != nil {
			t.Fatal(err)
		}
		ba, _ := os.ReadFile(a)
		bb, _ := os.ReadFile(b)
		if !bytes.Equal(ba, bb) {
			t.Errorf("%s: two renders of the same input differ", name)
		}
	}
}

func TestSizeAndNestedDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "fig.png")
	m := Meta{Title: "small", Width: 5, Height: 3}
	if err := Lines(path, m, []Series{{Label: "x", X: []float64{1, 2, 3}, Y: []float64{3, 1, 2}}}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, 5, 3)
	if matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".plot-*")); len(matches) != 0 {
		t.Errorf("temporary files left behind: %v", matches)
	}
}

func TestCDFLogWideRange(t *testing.T) {
	// 0.2 ms local reads to 600 ms cross-ocean tails, plus zero-latency
	// samples that must be clamped, not crash the log axis.
	s := Series{Label: "mixed", X: []float64{0, 0, 0.2, 0.5, 3, 40, 120, 600}, Y: []float64{0.01, 0.05, 0.1, 0.3, 0.5, 0.8, 0.95, 1}}
	path := filepath.Join(t.TempDir(), "cdf.png")
	if err := CDF(path, testMeta("wide", "latency (ms)", "fraction"), []Series{s}, true); err != nil {
		t.Fatalf("CDF(logX) = %v; want nil", err)
	}
	checkPNG(t, path, 7, 4.5)
	if s.X[0] != 0 {
		t.Errorf("CDF modified the caller's series: X[0] = %v", s.X[0])
	}
	// All values nonpositive: the fallback floor applies.
	zero := Series{X: []float64{0, 0}, Y: []float64{0.5, 1}}
	if err := CDF(path, Meta{}, []Series{zero}, true); err != nil {
		t.Errorf("CDF(all zero, logX) = %v; want nil", err)
	}
}

func TestLogTicks(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks{}).Ticks(0.1, 1000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	got := strings.Join(labels, " ")
	if want := "0.1 0.2 0.5 1 2 5 10 20 50 100 200 500"; !strings.HasPrefix(got, want) {
		t.Errorf("logTicks(0.1, 1000) labels = %q; want prefix %q", got, want)
	}
}

func TestInvalid(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	ok := Series{Label: "ok", X: []float64{1, 2}, Y: []float64{0.5, 1}}
	dir := t.TempDir()
	p := filepath.Join(dir, "x.png")
	cases := []struct {
		name string
		call func() error
		want string
	}{
		{"cdf no series", func() error { return CDF(p, Meta{}, nil, false) }, "no series"},
		{"cdf empty series", func() error { return CDF(p, Meta{}, []Series{{Label: "e"}}, false) }, "no points"},
		{"cdf mismatched", func() error {
			return CDF(p, Meta{}, []Series{{X: []float64{1, 2}, Y: []float64{1}}}, false)
		}, "len(X) = 2, len(Y) = 1"},
		{"cdf NaN", func() error { return CDF(p, Meta{}, []Series{ok, {X: []float64{nan}, Y: []float64{1}}}, true) }, "X[0] = NaN"},
		{"cdf Inf", func() error { return CDF(p, Meta{}, []Series{{X: []float64{1}, Y: []float64{inf}}}, true) }, "Y[0] = +Inf"},
		{"cdf y>1", func() error { return CDF(p, Meta{}, []Series{{X: []float64{1}, Y: []float64{1.5}}}, false) }, "[0, 1]"},
		{"cdf descending x", func() error {
			return CDF(p, Meta{}, []Series{{X: []float64{2, 1}, Y: []float64{0.5, 1}}}, false)
		}, "ascending"},
		{"cdf descending y", func() error {
			return CDF(p, Meta{}, []Series{{X: []float64{1, 2}, Y: []float64{0.9, 0.5}}}, false)
		}, "nondecreasing"},
		{"lines mismatched", func() error { return Lines(p, Meta{}, []Series{{X: []float64{1}, Y: nil}}) }, "len(X) = 1, len(Y) = 0"},
		{"lines NaN", func() error { return Lines(p, Meta{}, []Series{{X: []float64{1}, Y: []float64{nan}}}) }, "NaN"},
		{"lines bad size", func() error { return Lines(p, Meta{Width: -3}, []Series{ok}) }, "figure size"},
		{"lines huge", func() error { return Lines(p, Meta{Width: 1e6}, []Series{ok}) }, "figure size"},
		{"lines empty path", func() error { return Lines("", Meta{}, []Series{ok}) }, "empty output path"},
		{"timeseries no series", func() error { return TimeSeries(p, Meta{}, nil, nil) }, "no series"},
		{"timeseries NaN mark", func() error { return TimeSeries(p, Meta{}, []Series{ok}, []Mark{{X: nan}}) }, "mark #0"},
		{"bars no categories", func() error { return Bars(p, Meta{}, nil, []Series{ok}) }, "no categories"},
		{"bars no series", func() error { return Bars(p, Meta{}, []string{"a"}, nil) }, "no series"},
		{"bars wrong len", func() error { return Bars(p, Meta{}, []string{"a", "b", "c"}, []Series{ok}) }, "len(Y) = 2"},
		{"bars Inf", func() error { return Bars(p, Meta{}, []string{"a"}, []Series{{Y: []float64{inf}}}) }, "+Inf"},
		{"caption too long", func() error {
			return Lines(p, Meta{Height: 1.5, Caption: strings.Repeat("word ", 400)}, []Series{ok})
		}, "caption"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			if err == nil {
				t.Fatalf("got nil error; want one containing %q", c.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %q does not wrap ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %q; want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("invalid input still wrote %s (stat err %v)", p, err)
	}
}

func TestWriteError(t *testing.T) {
	// A regular file where a directory should be: an I/O error, not ErrInvalid.
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := Lines(filepath.Join(blocker, "x.png"), Meta{}, []Series{{X: []float64{1}, Y: []float64{1}}})
	if err == nil || errors.Is(err, ErrInvalid) {
		t.Errorf("Lines into a file-as-directory = %v; want an I/O error", err)
	}
}

func TestEdgeCases(t *testing.T) {
	dir := t.TempDir()
	one := []Series{{X: []float64{5}, Y: []float64{5}}} // single point, no label
	if err := Lines(filepath.Join(dir, "one.png"), Meta{}, one); err != nil {
		t.Errorf("Lines(single point) = %v", err)
	}
	if err := TimeSeries(filepath.Join(dir, "ts.png"), Meta{}, one, []Mark{{X: 100, Label: "far mark"}, {X: 100, Label: "same time"}}); err != nil {
		t.Errorf("TimeSeries(marks) = %v", err)
	}
	if err := Bars(filepath.Join(dir, "neg.png"), Meta{}, []string{"a", "b"}, []Series{{Label: "d", Y: []float64{-3, 2}}}); err != nil {
		t.Errorf("Bars(negative) = %v", err)
	}
	if err := Bars(filepath.Join(dir, "zero.png"), Meta{}, []string{"a"}, []Series{{Y: []float64{0}}}); err != nil {
		t.Errorf("Bars(zero) = %v", err)
	}
	var many []Series
	for i := 0; i < 12; i++ {
		many = append(many, Series{Label: strings.Repeat("s", i+1), X: []float64{0, 1}, Y: []float64{float64(i), float64(i + 1)}})
	}
	if err := Lines(filepath.Join(dir, "many.png"), Meta{Caption: strings.Repeat("x", 300)}, many); err != nil {
		t.Errorf("Lines(12 series, unbreakable caption) = %v", err)
	}
}

func TestWrapCaption(t *testing.T) {
	lines := wrapCaption(testCaption, 1000)
	if len(lines) < 2 {
		t.Fatalf("wrapCaption = %q; want at least 2 lines", lines)
	}
	if got := strings.Join(lines, " "); got != testCaption {
		t.Errorf("rejoined caption = %q; want %q", got, testCaption)
	}
	for _, l := range lines {
		if len(l) > captionMaxChars {
			t.Errorf("line %q has %d chars; want <= %d", l, len(l), captionMaxChars)
		}
	}
}
