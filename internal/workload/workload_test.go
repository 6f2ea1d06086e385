package workload

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

func mustGen(t testing.TB, s Spec) *Generator {
	t.Helper()
	g, err := NewGenerator(s)
	if err != nil {
		t.Fatalf("NewGenerator(%+v) = %v", s, err)
	}
	return g
}

func mustPreset(t testing.TB, name string) Spec {
	t.Helper()
	s, err := Preset(name)
	if err != nil {
		t.Fatalf("Preset(%q) = %v", name, err)
	}
	return s
}

func TestOpKindString(t *testing.T) {
	for _, tc := range []struct {
		k    OpKind
		want string
	}{{Read, "read"}, {Update, "update"}, {Insert, "insert"}, {Scan, "scan"}, {ReadModifyWrite, "rmw"}} {
		if got := tc.k.String(); got != tc.want {
			t.Errorf("OpKind(%d).String() = %q; want %q", tc.k, got, tc.want)
		}
	}
}

func TestPresets(t *testing.T) {
	if got, want := strings.Join(PresetNames(), ","), "a,b,c,d,e,f"; got != want {
		t.Errorf("PresetNames() = %q; want %q", got, want)
	}
	for _, tc := range []struct {
		name, dist string
		mix        [5]float64 // read, update, insert, scan, rmw
		maxScan    int
	}{
		{"a", DistZipfian, [5]float64{0.5, 0.5, 0, 0, 0}, 1000},
		{"workloadb", DistZipfian, [5]float64{0.95, 0.05, 0, 0, 0}, 1000},
		{"C", DistZipfian, [5]float64{1, 0, 0, 0, 0}, 1000},
		{"d", DistLatest, [5]float64{0.95, 0, 0.05, 0, 0}, 1000},
		{"e", DistZipfian, [5]float64{0, 0, 0.05, 0.95, 0}, 100},
		{"WorkloadF", DistZipfian, [5]float64{0.5, 0, 0, 0, 0.5}, 1000},
	} {
		s := mustPreset(t, tc.name)
		got := [5]float64{s.ReadProportion, s.UpdateProportion, s.InsertProportion, s.ScanProportion, s.ReadModifyWriteProportion}
		if got != tc.mix || s.RequestDistribution != tc.dist || s.MaxScanLength != tc.maxScan ||
			s.RecordCount != 1000 || s.OperationCount != 1000 || s.ValueSize != 1000 ||
			s.InsertOrder != InsertHashed || s.ZipfianConstant != 0.99 {
			t.Errorf("Preset(%q) = %+v; want mix %v dist %q max scan %d", tc.name, s, tc.mix, tc.dist, tc.maxScan)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("Preset(%q).Validate() = %v", tc.name, err)
		}
	}
	_, err := Preset("g")
	if err == nil || !strings.Contains(err.Error(), "a, b, c, d, e, f") {
		t.Errorf("Preset(%q) error = %v; want it to list valid names", "g", err)
	}
}

func TestPresetOpMix(t *testing.T) {
	const n = 100_000
	for _, name := range PresetNames() {
		s := mustPreset(t, name)
		g := mustGen(t, s)
		r := newRand(1)
		var counts [5]int
		for i := 0; i < n; i++ {
			op := g.Next(r)
			counts[op.Kind]++
			if op.Kind == Scan && (op.ScanLen < 1 || op.ScanLen > s.MaxScanLength) {
				t.Fatalf("preset %s: scan length %d outside [1, %d]", name, op.ScanLen, s.MaxScanLength)
			}
			if op.Key == "" {
				t.Fatalf("preset %s: empty key in %+v", name, op)
			}
		}
		want := [5]float64{s.ReadProportion, s.UpdateProportion, s.InsertProportion, s.ScanProportion, s.ReadModifyWriteProportion}
		for k := range counts {
			got := float64(counts[k]) / n
			if math.Abs(got-want[k]) > 0.01 {
				t.Errorf("preset %s: %s fraction = %.4f; want %.4f ± 0.01", name, OpKind(k), got, want[k])
			}
		}
	}
}

// keyFreq runs n reads against s and returns per-record-number counts.
func keyFreq(t *testing.T, s Spec, n int, seed uint64) []int {
	t.Helper()
	g := mustGen(t, s)
	index := make(map[string]int, s.RecordCount)
	for i, k := range g.LoadKeys() {
		index[k] = i
	}
	counts := make([]int, s.RecordCount)
	r := newRand(seed)
	for i := 0; i < n; i++ {
		op := g.Next(r)
		j, ok := index[op.Key]
		if !ok {
			t.Fatalf("Next() key %q not among the loaded keys", op.Key)
		}
		counts[j]++
	}
	return counts
}

func readOnly(dist string) Spec {
	return Spec{RecordCount: 1000, OperationCount: 1000, ReadProportion: 1, RequestDistribution: dist}
}

func TestScrambledZipfianSkew(t *testing.T) {
	const n = 100_000
	counts := keyFreq(t, readOnly(DistZipfian), n, 2)
	maxc := 0
	for _, c := range counts {
		maxc = max(maxc, c)
	}
	uniform := float64(n) / 1000
	// The hottest rank alone has probability 1/ZETAN ≈ 3.8%.
	if float64(maxc) < 20*uniform {
		t.Errorf("zipfian: hottest key count = %d; want ≥ 20× uniform (%.0f)", maxc, 20*uniform)
	}
}

func TestZipfExponentRanks(t *testing.T) {
	const n = 200_000
	for _, tc := range []struct {
		s    float64
		dist string
	}{{4, DistZipfian}, {1, DistZipfian}, {2, DistZipfian}, {0.99, DistZipfian}} {
		spec := readOnly(tc.dist)
		spec.ZipfExponent = tc.s
		counts := keyFreq(t, spec, n, 3)
		h := 0.0
		for k := 1; k <= spec.RecordCount; k++ {
			h += math.Pow(float64(k), -tc.s)
		}
		for rank := 1; rank <= 3; rank++ {
			want := math.Pow(float64(rank), -tc.s) / h
			got := float64(counts[rank-1]) / n
			if math.Abs(got-want) > 0.01 {
				t.Errorf("s=%v: P(rank %d) = %.4f; want %.4f ± 0.01", tc.s, rank, got, want)
			}
		}
		if c2 := counts[1]; c2 > 0 {
			ratio := float64(counts[0]) / float64(c2)
			want := math.Pow(2, tc.s)
			if math.Abs(ratio-want)/want > 0.1 {
				t.Errorf("s=%v: count(rank1)/count(rank2) = %.2f; want %.2f ± 10%%", tc.s, ratio, want)
			}
		}
	}
	// GlobLease: s = 4 gives rank 1 about 1/zeta(4) = 90/pi^4 ≈ 0.924.
	spec := readOnly(DistZipfian)
	spec.ZipfExponent = 4
	counts := keyFreq(t, spec, 100_000, 4)
	if got, want := float64(counts[0])/100_000, 90/math.Pow(math.Pi, 4); math.Abs(got-want) > 0.01 {
		t.Errorf("s=4: P(key 0) = %.4f; want %.4f ± 0.01", got, want)
	}
}

func TestUniformChiSquare(t *testing.T) {
	const keys, n = 100, 100_000
	spec := readOnly(DistUniform)
	spec.RecordCount = keys
	counts := keyFreq(t, spec, n, 5)
	exp := float64(n) / keys
	chi := 0.0
	for _, c := range counts {
		d := float64(c) - exp
		chi += d * d / exp
	}
	// 99 degrees of freedom: mean 99, sd ≈ 14; allow 5 sd.
	if chi > 99+5*14 {
		t.Errorf("uniform: chi-square = %.1f; want < %d", chi, 99+5*14)
	}
}

func TestHotspot(t *testing.T) {
	const n = 100_000
	counts := keyFreq(t, readOnly(DistHotspot), n, 6)
	hot := 0
	for _, c := range counts[:200] {
		hot += c
	}
	if got := float64(hot) / n; math.Abs(got-0.8) > 0.01 {
		t.Errorf("hotspot: fraction on hot 20%% of keys = %.4f; want 0.80 ± 0.01", got)
	}
}

func TestLatestFavoursNewest(t *testing.T) {
	for _, exp := range []float64{0, 2} {
		s := mustPreset(t, "d")
		s.ZipfExponent = exp
		s.OperationCount = 20_000
		g := mustGen(t, s)
		index := map[string]int{}
		for i, k := range g.LoadKeys() {
			index[k] = i
		}
		r := newRand(7)
		newest := s.RecordCount - 1
		reads, atNewest, within10 := 0, 0, 0
		for i := 0; i < 20_000; i++ {
			op := g.Next(r)
			if op.Kind == Insert {
				newest++
				if _, dup := index[op.Key]; dup {
					t.Fatalf("insert of existing key %q", op.Key)
				}
				index[op.Key] = newest
				if g.KeyCount() != newest+1 {
					t.Fatalf("KeyCount() = %d; want %d", g.KeyCount(), newest+1)
				}
				continue
			}
			j, ok := index[op.Key]
			if !ok {
				t.Fatalf("read of unknown key %q", op.Key)
			}
			reads++
			if j == newest {
				atNewest++
			}
			if newest-j < 10 {
				within10++
			}
		}
		if newest < s.RecordCount+500 {
			t.Fatalf("only %d inserts", newest-s.RecordCount+1)
		}
		fNewest, f10 := float64(atNewest)/float64(reads), float64(within10)/float64(reads)
		// theta 0.99 over ~2000 items: P(offset 0) = 1/zeta ≈ 0.12; s=2: ≈ 0.61.
		if fNewest < 0.08 || f10 < 0.3 {
			t.Errorf("latest (zipf_exponent %v): reads of newest key = %.3f, within 10 of newest = %.3f; want ≥ 0.08 and ≥ 0.3", exp, fNewest, f10)
		}
	}
}

func TestDeterminism(t *testing.T) {
	for _, dist := range validDistributions {
		for _, exp := range []float64{0, 1.5} {
			s := mustPreset(t, "a")
			s.InsertProportion, s.ScanProportion, s.ReadProportion, s.UpdateProportion = 0.1, 0.1, 0.4, 0.4
			s.RequestDistribution, s.ZipfExponent = dist, exp
			g1, g2 := mustGen(t, s), mustGen(t, s)
			r1, r2 := newRand(42), newRand(42)
			for i := 0; i < 10_000; i++ {
				a, b := g1.Next(r1), g2.Next(r2)
				if a != b {
					t.Fatalf("%s (exp %v) op %d: %+v != %+v with the same seed", dist, exp, i, a, b)
				}
			}
			g3, r3 := mustGen(t, s), newRand(43)
			same := 0
			g1, r1 = mustGen(t, s), newRand(42)
			for i := 0; i < 1000; i++ {
				if g1.Next(r1) == g3.Next(r3) {
					same++
				}
			}
			if same == 1000 {
				t.Errorf("%s: different seeds gave identical sequences", dist)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Spec)
		want   string // substring of the error; "" means valid
	}{
		{"preset", func(*Spec) {}, ""},
		{"record count", func(s *Spec) { s.RecordCount = 0 }, "record_count"},
		{"negative ops", func(s *Spec) { s.OperationCount = -1 }, "operation_count"},
		{"proportion range", func(s *Spec) { s.ReadProportion, s.UpdateProportion = 1.5, -0.5 }, "read_proportion must be in [0, 1]"},
		{"rmw range", func(s *Spec) { s.ReadModifyWriteProportion = -0.1 }, "read_modify_write_proportion"},
		{"sum", func(s *Spec) { s.ReadProportion = 0.4 }, "must sum to 1"},
		{"sum within 1e-9", func(s *Spec) { s.ReadProportion = 0.5 + 1e-12 }, ""},
		{"distribution", func(s *Spec) { s.RequestDistribution = "pareto" }, "request_distribution \"pareto\" unknown; valid: uniform, zipfian, latest, hotspot"},
		{"zipfian constant", func(s *Spec) { s.ZipfianConstant = 1 }, "zipfian_constant"},
		{"constant ignored with exponent", func(s *Spec) { s.ZipfianConstant, s.ZipfExponent = 1, 4 }, ""},
		{"exponent", func(s *Spec) { s.ZipfExponent = -1 }, "zipf_exponent"},
		{"exponent NaN", func(s *Spec) { s.ZipfExponent = math.NaN() }, "zipf_exponent"},
		{"exponent key space", func(s *Spec) { s.ZipfExponent, s.RecordCount = 4, MaxExactZipfKeys+1 }, "zipf_exponent"},
		{"hot data", func(s *Spec) { s.HotspotDataFraction = 2 }, "hotspot_data_fraction"},
		{"hot opn", func(s *Spec) { s.HotspotOpnFraction = -1 }, "hotspot_opn_fraction"},
		{"min scan", func(s *Spec) { s.MinScanLength = -3 }, "min_scan_length"},
		{"max scan", func(s *Spec) { s.MaxScanLength = 0 }, "max_scan_length"},
		{"scan dist", func(s *Spec) { s.ScanLengthDistribution = "latest" }, "scan_length_distribution"},
		{"value size", func(s *Spec) { s.ValueSize = 0 }, "value_size"},
		{"insert order", func(s *Spec) { s.InsertOrder = "random" }, "insert_order \"random\" unknown; valid: hashed, ordered"},
	} {
		s := mustPreset(t, "a")
		tc.mutate(&s)
		err := s.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Validate() = %q; want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: Validate() = %v; want error containing %q", tc.name, err, tc.want)
		}
		if tc.want != "" {
			if _, err := NewGenerator(s); err == nil && tc.name != "record count" && tc.name != "max scan" && tc.name != "value size" {
				t.Errorf("%s: NewGenerator accepted an invalid spec", tc.name)
			}
		}
	}
}

func TestEnsureDefaults(t *testing.T) {
	var s Spec
	s.EnsureDefaults()
	want := Spec{RecordCount: 1000, OperationCount: 1000, ReadProportion: 0.95, UpdateProportion: 0.05,
		RequestDistribution: "uniform", ZipfianConstant: 0.99, HotspotDataFraction: 0.2, HotspotOpnFraction: 0.8,
		MinScanLength: 1, MaxScanLength: 1000, ScanLengthDistribution: "uniform", ValueSize: 1000, InsertOrder: "hashed"}
	if s != want {
		t.Errorf("EnsureDefaults() = %+v; want %+v", s, want)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("defaults Validate() = %v", err)
	}
}

func TestKeyName(t *testing.T) {
	for _, tc := range []struct {
		n      uint64
		hashed bool
		want   string
	}{
		{0, false, "user0"},
		{42, false, "user42"},
		// YCSB's first hashed key, familiar from YCSB runs.
		{0, true, "user6284781860667377211"},
	} {
		if got := KeyName(tc.n, tc.hashed); got != tc.want {
			t.Errorf("KeyName(%d, %v) = %q; want %q", tc.n, tc.hashed, got, tc.want)
		}
	}
	seen := map[string]bool{}
	for i := uint64(0); i < 10_000; i++ {
		k := KeyName(i, true)
		if !strings.HasPrefix(k, "user") || seen[k] {
			t.Fatalf("KeyName(%d, true) = %q: not user-prefixed or duplicate", i, k)
		}
		seen[k] = true
	}
}

func TestLoadKeys(t *testing.T) {
	for _, order := range []string{InsertHashed, InsertOrdered} {
		s := mustPreset(t, "d")
		s.InsertOrder = order
		g := mustGen(t, s)
		keys := g.LoadKeys()
		if len(keys) != s.RecordCount {
			t.Fatalf("len(LoadKeys()) = %d; want %d", len(keys), s.RecordCount)
		}
		for i, k := range keys {
			if want := KeyName(uint64(i), order == InsertHashed); k != want {
				t.Fatalf("LoadKeys()[%d] = %q; want %q", i, k, want)
			}
		}
		r := newRand(8)
		for {
			if op := g.Next(r); op.Kind == Insert {
				if want := KeyName(uint64(s.RecordCount), order == InsertHashed); op.Key != want {
					t.Errorf("first insert key = %q; want %q", op.Key, want)
				}
				break
			}
		}
	}
}

func TestZetaApprox(t *testing.T) {
	// YCSB's precomputed ZETAN is zeta(10^10, 0.99).
	if got := zetaStatic(scrambledItemCount, 0.99); math.Abs(got-scrambledZetan)/scrambledZetan > 1e-6 {
		t.Errorf("zetaStatic(1e10, 0.99) = %v; want %v", got, scrambledZetan)
	}
	n := int64(zetaDirectLimit + 12345)
	if got, want := zetaStatic(n, 0.7), zetaRange(0, n, 0.7, 0); math.Abs(got-want)/want > 1e-9 {
		t.Errorf("zetaStatic(%d, 0.7) = %v; want %v", n, got, want)
	}
}

func TestScrambledOtherTheta(t *testing.T) {
	s := readOnly(DistZipfian)
	s.ZipfianConstant = 0.5
	counts := keyFreq(t, s, 50_000, 9)
	nonzero := 0
	for _, c := range counts {
		if c > 0 {
			nonzero++
		}
	}
	if nonzero < 900 {
		t.Errorf("zipfian constant 0.5: %d of 1000 keys read; want ≥ 900", nonzero)
	}
}

func TestScanLengthZipfian(t *testing.T) {
	s := mustPreset(t, "e")
	s.ScanLengthDistribution = ScanZipfian
	g := mustGen(t, s)
	r := newRand(10)
	short := 0
	scans := 0
	for i := 0; i < 20_000; i++ {
		op := g.Next(r)
		if op.Kind != Scan {
			continue
		}
		scans++
		if op.ScanLen < 1 || op.ScanLen > 100 {
			t.Fatalf("scan length %d outside [1, 100]", op.ScanLen)
		}
		if op.ScanLen <= 2 {
			short++
		}
	}
	if float64(short)/float64(scans) < 0.2 {
		t.Errorf("zipfian scan length: fraction ≤ 2 = %.3f; want ≥ 0.2", float64(short)/float64(scans))
	}
}

func TestSmallRecordCounts(t *testing.T) {
	for _, dist := range validDistributions {
		for _, rc := range []int{1, 2, 3} {
			s := Spec{RecordCount: rc, ReadProportion: 0.5, InsertProportion: 0.5, RequestDistribution: dist}
			g := mustGen(t, s)
			r := newRand(11)
			for i := 0; i < 2000; i++ {
				if op := g.Next(r); op.Key == "" {
					t.Fatalf("%s rc=%d: empty key", dist, rc)
				}
			}
		}
	}
}

func TestNextNoAlloc(t *testing.T) {
	for _, name := range []string{"a", "c", "e", "f"} {
		g := mustGen(t, mustPreset(t, name))
		r := newRand(12)
		if n := testing.AllocsPerRun(1000, func() { g.Next(r) }); n > 0.2 { // e inserts 5%
			t.Errorf("preset %s: Next allocates %.2f times per op; want ~0", name, n)
		}
	}
}

func TestPoissonGap(t *testing.T) {
	r := newRand(13)
	const n, rate = 100_000, 250.0
	var sum time.Duration
	for i := 0; i < n; i++ {
		gap := PoissonGap(r, rate)
		if gap < 0 {
			t.Fatalf("PoissonGap = %v; want ≥ 0", gap)
		}
		sum += gap
	}
	mean := sum.Seconds() / n
	if want := 1 / rate; math.Abs(mean-want)/want > 0.02 {
		t.Errorf("mean PoissonGap = %v s; want %v s ± 2%%", mean, want)
	}
	if got := PoissonGap(r, 0); got != math.MaxInt64 {
		t.Errorf("PoissonGap(rate 0) = %v; want max Duration", got)
	}
	a := NewArrivals(rate)
	prev := time.Duration(0)
	for i := 0; i < 100; i++ {
		at := a.Next(r)
		if at < prev {
			t.Fatalf("Arrivals.Next went backwards: %v after %v", at, prev)
		}
		prev = at
	}
}

func BenchmarkNextZipfian(b *testing.B) {
	s, _ := Preset("c")
	g := mustGen(b, s)
	r := newRand(1)
	b.ReportAllocs()
	for b.Loop() {
		_ = g.Next(r)
	}
}

func BenchmarkNextZipfExponent(b *testing.B) {
	s, _ := Preset("c")
	s.RecordCount, s.ZipfExponent = 1_000_000, 1.1
	g := mustGen(b, s)
	r := newRand(1)
	b.ReportAllocs()
	for b.Loop() {
		_ = g.Next(r)
	}
}
