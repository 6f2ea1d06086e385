package topo

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func mustPreset(t *testing.T, name string) *World {
	t.Helper()
	w, err := Preset(name)
	if err != nil {
		t.Fatalf("Preset(%q): %v", name, err)
	}
	return w
}

func region(t *testing.T, w *World, name string) int {
	t.Helper()
	i := w.RegionIndex(name)
	if i < 0 {
		t.Fatalf("world %q has no region %q", w.Name, name)
	}
	return i
}

func TestPresetNames(t *testing.T) {
	got := strings.Join(PresetNames(), ",")
	want := "agar6,catenae3,cric5,dir2,globlease4,local3,meteor3,world10"
	if got != want {
		t.Errorf("PresetNames() = %q; want %q", got, want)
	}
}

func TestPresetsValidate(t *testing.T) {
	for _, name := range PresetNames() {
		t.Run(name, func(t *testing.T) {
			w := mustPreset(t, name)
			if w.Name != name {
				t.Errorf("Preset(%q).Name = %q; want %q", name, w.Name, name)
			}
			if w.Source == "" || w.Description == "" {
				t.Errorf("Preset(%q) lacks source or description", name)
			}
			for i, l := range w.Links {
				if l.Source == "" {
					t.Errorf("Preset(%q).Links[%d] (%s-%s) lacks source", name, i, l.From, l.To)
				}
			}
			if err := w.Validate(); err != nil {
				t.Errorf("Validate again: %v", err)
			}
			n := len(w.Regions)
			for a := 0; a < n; a++ {
				for b := 0; b < n; b++ {
					if a != b && w.BaseRTT(a, b) < w.LightRTT(a, b) {
						t.Errorf("%s: base RTT %s-%s %v is below the light floor %v",
							name, w.Regions[a].Name, w.Regions[b].Name, w.BaseRTT(a, b), w.LightRTT(a, b))
					}
					if w.BaseDelay(a, b) != w.BaseDelay(b, a) {
						t.Errorf("%s: asymmetric base delay %d-%d", name, a, b)
					}
				}
			}
			top := NewTopology(w)
			if len(top.Nodes) != w.NodeCount() {
				t.Errorf("%s: %d nodes; want %d", name, len(top.Nodes), w.NodeCount())
			}
		})
	}
}

func TestPresetValues(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	tests := []struct {
		world, from, to string
		oneWay          time.Duration // base one-way delay
	}{
		{"globlease4", "us-west", "us-east", ms(50)},
		{"globlease4", "us-east", "ireland", ms(55)},
		{"globlease4", "us-west", "japan", ms(70)},
		{"globlease4", "us-east", "japan", ms(250)},
		{"globlease4", "japan", "us-east", ms(250)},
		{"globlease4", "us-west", "ireland", ms(250)},
		{"globlease4", "ireland", "japan", ms(250)},
		{"meteor3", "europe", "us", ms(50)},
		{"meteor3", "us", "asia", ms(75)},
		{"meteor3", "asia", "us", ms(75)},
		{"meteor3", "europe", "asia", ms(105)},
		{"dir2", "dc1", "dc2", ms(100)},
		{"dir2", "dc2", "dc1", ms(100)},
		{"dir2", "dc1", "dir", ms(50)},
		{"dir2", "dir", "dc2", ms(50)},
		{"agar6", "n-virginia", "sao-paulo", ms(59.75)},
		{"agar6", "frankfurt", "dublin", ms(9.78)},
		{"agar6", "sydney", "tokyo", ms(51.95)},
		{"cric5", "east-us", "west-europe", ms(42.5)},
		{"cric5", "japan-east", "southeast-asia", ms(35)},
		{"local3", "a", "c", ms(1)},
		{"catenae3", "europe-west1", "us-central1", ms(56.75)},
		{"catenae3", "asia-east1", "us-central1", ms(76)},
		{"catenae3", "europe-west1", "asia-east1", ms(136.25)},
	}
	for _, tc := range tests {
		w := mustPreset(t, tc.world)
		a, b := region(t, w, tc.from), region(t, w, tc.to)
		if got := w.BaseDelay(a, b); got != tc.oneWay {
			t.Errorf("%s BaseDelay(%q, %q) = %v; want %v", tc.world, tc.from, tc.to, got, tc.oneWay)
		}
	}

	g := mustPreset(t, "globlease4")
	if got := g.BaseRTT(region(t, g, "us-east"), region(t, g, "japan")); got < 500*time.Millisecond {
		t.Errorf("globlease4 us-east-japan base RTT = %v; want >= 500ms", got)
	}
	if got := g.BaseRTT(region(t, g, "us-west"), region(t, g, "us-east")); got != 100*time.Millisecond {
		t.Errorf("globlease4 us-west-us-east base RTT = %v; want 100ms", got)
	}
	// Fig. 4: an ALL write waits for the farthest replica, > 500 ms from every region.
	for a := range g.Regions {
		var far time.Duration
		for b := range g.Regions {
			far = max(far, g.BaseRTT(a, b))
		}
		if far < 500*time.Millisecond {
			t.Errorf("globlease4 %s: farthest base RTT = %v; want >= 500ms", g.Regions[a].Name, far)
		}
	}
	d := mustPreset(t, "dir2")
	for _, r := range d.Regions {
		if r.Provider != "emulated" {
			t.Errorf("dir2 region %q provider = %q; want %q", r.Name, r.Provider, "emulated")
		}
	}
}

func TestRTTMatrix(t *testing.T) {
	w := mustPreset(t, "meteor3")
	m := w.RTTMatrix()
	eu, us := region(t, w, "europe"), region(t, w, "us")
	if got, want := m[eu][us], 102*time.Millisecond; got != want { // 2*(50+1)
		t.Errorf("RTTMatrix()[europe][us] = %v; want %v", got, want)
	}
	if got, want := m[eu][eu], 600*time.Microsecond; got != want { // 2*(0.25+0.05)
		t.Errorf("RTTMatrix()[europe][europe] = %v; want %v", got, want)
	}
}

func TestLightRTT(t *testing.T) {
	w := mustPreset(t, "globlease4")
	got := w.LightRTT(region(t, w, "us-east"), region(t, w, "ireland"))
	if got < 40*time.Millisecond || got > 60*time.Millisecond {
		t.Errorf("LightRTT(us-east, ireland) = %v; want 40ms..60ms", got)
	}
	if got := w.LightRTT(0, 0); got != 0 {
		t.Errorf("LightRTT(0, 0) = %v; want 0", got)
	}
	// Antipodes: half the circumference, 20015 km, there and back at 200,000 km/s.
	anti := &World{Regions: []Region{{Lat: 0, Long: 0}, {Lat: 0, Long: 180}}}
	sec := 2 * math.Pi * EarthRadiusKm / FibreKmPerSec
	want := time.Duration(sec * float64(time.Second))
	if got := anti.LightRTT(0, 1); (got - want).Abs() > time.Microsecond {
		t.Errorf("LightRTT(antipodes) = %v; want %v", got, want)
	}
}

func TestSample(t *testing.T) {
	const n = 200000
	for _, base := range []float64{0, 10} {
		for _, dist := range []string{"", DistNone, DistExponential, DistUniform, DistNormal} {
			mean := 5.0
			if dist == "" || dist == DistNone {
				mean = 0
			}
			l := Link{OneWayMs: base, Jitter: Jitter{Dist: dist, MeanMs: mean}}
			t.Run(fmt.Sprintf("%s/base=%v", dist, base), func(t *testing.T) {
				r := rand.New(rand.NewPCG(1, 2))
				floor := msToDuration(base)
				var sum float64
				for i := 0; i < n; i++ {
					d := l.Sample(r)
					if d < floor {
						t.Fatalf("Sample() = %v; want >= base %v", d, floor)
					}
					sum += float64(d) / float64(time.Millisecond)
				}
				got, want := sum/n, base+mean
				if math.Abs(got-want) > 0.05*want+1e-9 {
					t.Errorf("mean of %d samples = %.4f ms; want %.4f ms (within 5%%)", n, got, want)
				}
			})
		}
	}
}

func TestSampleNoAlloc(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	w := mustPreset(t, "globlease4")
	for _, dist := range Dists {
		l := Link{OneWayMs: 3, Jitter: Jitter{Dist: dist, MeanMs: 1}}
		if got := testing.AllocsPerRun(1000, func() { _ = l.Sample(r); _ = w.Delay(0, 1, r) }); got != 0 {
			t.Errorf("Sample(%q) allocates %v times per call; want 0", dist, got)
		}
	}
}

func BenchmarkSample(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	l := Link{OneWayMs: 50, Jitter: Jitter{Dist: DistExponential, MeanMs: 2}}
	for b.Loop() {
		_ = l.Sample(r)
	}
}

const goodYAML = `
name: tiny
description: two regions
nodes_per_region: 2
regions:
  - {name: east, provider: aws, lat: 39, long: -77}
  - {name: west, provider: aws, lat: 37, long: -122}
links:
  - {from: east, to: west, one_way_ms: 40, jitter: {dist: uniform, mean_ms: 1}}
`

func TestParseGood(t *testing.T) {
	w, err := Parse([]byte(goodYAML))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got, want := w.BaseDelay(1, 0), 40*time.Millisecond; got != want {
		t.Errorf("BaseDelay(west, east) = %v; want %v (reverse of a single link)", got, want)
	}
	if got, want := w.BaseDelay(0, 0), 250*time.Microsecond; got != want {
		t.Errorf("BaseDelay(east, east) = %v; want default intra %v", got, want)
	}
	if got, want := w.Intra.Jitter.Dist, DistExponential; got != want {
		t.Errorf("default Intra.Jitter.Dist = %q; want %q", got, want)
	}

	// A reverse link given explicitly wins over the forward one.
	asym := goodYAML + "  - {from: west, to: east, one_way_ms: 60}\n"
	w, err = Parse([]byte(asym))
	if err != nil {
		t.Fatalf("Parse(asymmetric): %v", err)
	}
	if got, want := w.BaseDelay(1, 0), 60*time.Millisecond; got != want {
		t.Errorf("BaseDelay(west, east) = %v; want %v", got, want)
	}
	if got, want := w.BaseDelay(0, 1), 40*time.Millisecond; got != want {
		t.Errorf("BaseDelay(east, west) = %v; want %v", got, want)
	}

	// An explicit all-zero intra is kept, not replaced by the default.
	w, err = Parse([]byte(goodYAML + "intra: {one_way_ms: 0}\n"))
	if err != nil {
		t.Fatalf("Parse(zero intra): %v", err)
	}
	if got := w.BaseDelay(0, 0); got != 0 {
		t.Errorf("BaseDelay(east, east) with explicit zero intra = %v; want 0", got)
	}
}

func TestValidateProgrammatic(t *testing.T) {
	w := &World{
		Name:           "prog",
		NodesPerRegion: 1,
		Regions:        []Region{{Name: "x"}, {Name: "y"}},
		Links:          []Link{{From: "x", To: "y", OneWayMs: 5}},
	}
	if err := w.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if got, want := w.BaseDelay(1, 1), 250*time.Microsecond; got != want {
		t.Errorf("BaseDelay(y, y) = %v; want default intra %v", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // substring of the error
	}{
		{"unknown field", goodYAML + "colour: blue\n", `line 10: unknown field "colour" in world "tiny"; valid fields: name, description, source, regions, nodes_per_region, intra, links, storage_services`},
		{"unknown nested field", strings.Replace(goodYAML, "one_way_ms: 40", "one_way: 40", 1), `line 9: unknown field "one_way" in links[0] (did you mean "one_way_ms"?); valid fields: from, to, one_way_ms, jitter, source`},
		{"unknown dist", strings.Replace(goodYAML, "uniform", "gauss", 1), `world "tiny": links[0].jitter.dist: unknown distribution "gauss" (valid: none, exponential, uniform, normal)`},
		{"missing link", goodYAML + "  - {name: japan, lat: 35, long: 139}\n", ""}, // fixed below
		{"unknown region", strings.Replace(goodYAML, "to: west", "to: japan", 1), `world "tiny": links[0].to: unknown region "japan" (known: "east", "west")`},
		{"bad lat", strings.Replace(goodYAML, "lat: 39", "lat: 91", 1), `world "tiny": regions[0].lat: 91 is outside [-90, 90]`},
		{"bad long", strings.Replace(goodYAML, "long: -122", "long: -190", 1), `world "tiny": regions[1].long: -190 is outside [-180, 180]`},
		{"nan lat", strings.Replace(goodYAML, "lat: 39", "lat: .nan", 1), `world "tiny": regions[0].lat: NaN is outside`},
		{"zero nodes", strings.Replace(goodYAML, "nodes_per_region: 2", "nodes_per_region: 0", 1), `world "tiny": nodes_per_region: 0, must be at least 1`},
		{"negative delay", strings.Replace(goodYAML, "one_way_ms: 40", "one_way_ms: -4", 1), `world "tiny": links[0].one_way_ms: -4 is negative`},
		{"nan delay", strings.Replace(goodYAML, "one_way_ms: 40", "one_way_ms: .nan", 1), `links[0].one_way_ms: NaN is not a finite number`},
		{"negative jitter", strings.Replace(goodYAML, "mean_ms: 1", "mean_ms: -1", 1), `links[0].jitter.mean_ms: -1 is negative`},
		{"jitter mean without dist", strings.Replace(goodYAML, "dist: uniform, ", "", 1), `links[0].jitter.mean_ms: 1 given but dist is ""`},
		{"duplicate region", strings.Replace(goodYAML, "name: west", "name: east", 1), `world "tiny": regions[1].name: duplicate region "east" (also regions[0])`},
		{"duplicate link", goodYAML + "  - {from: east, to: west, one_way_ms: 3}\n", `links[1]: duplicate link from "east" to "west" (also links[0])`},
		{"self link", goodYAML + "  - {from: east, to: east, one_way_ms: 3}\n", `links[1]: from and to are both "east" (use intra`},
		{"no regions", "name: empty\nnodes_per_region: 1\n", `world "empty": regions: none given`},
		{"no name", strings.Replace(goodYAML, "name: tiny", "", 1), `world: name: missing`},
		{"not a number", strings.Replace(goodYAML, "lat: 39", "lat: north", 1), `line 6: regions[0].lat: "north" is not a number`},
		{"nodes not int", strings.Replace(goodYAML, "nodes_per_region: 2", "nodes_per_region: 2.5", 1), `line 4: nodes_per_region: "2.5" is not an integer`},
		{"regions not a list", "name: x\nregions: 3\n", `line 2: regions: expected a list, got "3"`},
		{"twice", goodYAML + "name: again\n", `line 10: name: given twice (first on line 2)`},
		{"empty", "", `world: empty file`},
		{"scalar doc", "hello", `line 1: world: expected a mapping with fields name,`},
		{"bad yaml", "name: [unclosed\n", `line 1: syntax error: did not find expected ',' or ']'`},
		{"bad intra", goodYAML + "intra: {one_way_ms: -1}\n", `world "tiny": intra.one_way_ms: -1 is negative`},
		{"huge delay", strings.Replace(goodYAML, "one_way_ms: 40", "one_way_ms: 1e300", 1), `links[0].one_way_ms: 1e+300 ms is more than an hour`},
	}
	// missing link: a third region nobody links to.
	tests[3].yaml = strings.Replace(goodYAML, "links:", "  - {name: japan, lat: 35, long: 139}\nlinks:", 1)
	tests[3].want = `world "tiny": missing link between "east" and "japan"`
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil {
				t.Fatalf("Parse(%s) = nil error; want %q", tc.name, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%s) error = %q; want it to contain %q", tc.name, err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("Parse(%s) error has several lines: %q", tc.name, err)
			}
		})
	}
}

func TestPresetUnknown(t *testing.T) {
	for _, name := range []string{"nope", "", "../presets/local3", "presets/local3"} {
		_, err := Preset(name)
		if err == nil || !strings.Contains(err.Error(), "valid: agar6, catenae3, cric5, dir2, globlease4, local3, meteor3") {
			t.Errorf("Preset(%q) error = %v; want one listing the valid names", name, err)
		}
	}
}

func TestResolveAndLoad(t *testing.T) {
	w, err := Resolve("dir2")
	if err != nil || w.Name != "dir2" {
		t.Fatalf("Resolve(%q) = %v, %v; want preset dir2", "dir2", w, err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(path, []byte(goodYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err = Resolve(path)
	if err != nil || w.Name != "tiny" {
		t.Fatalf("Resolve(%q) = %v, %v; want world tiny", path, w, err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(goodYAML+"oops: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.HasPrefix(err.Error(), bad+":10: unknown field \"oops\"") {
		t.Errorf("Load(%q) error = %v; want one prefixed by the path and line", bad, err)
	}
	if err := os.WriteFile(bad, []byte(strings.Replace(goodYAML, "lat: 39", "lat: 91", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": world \"tiny\": regions[0].lat: 91") {
		t.Errorf("Load(%q) error = %v; want one prefixed by the path", bad, err)
	}
	if _, err := Resolve("no-such-world"); err == nil || !strings.Contains(err.Error(), "not a preset (valid: agar6") {
		t.Errorf("Resolve(%q) error = %v; want unknown-world error listing presets", "no-such-world", err)
	}
}

func TestWriteMatrixAndList(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMatrix(&b, mustPreset(t, "globlease4")); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"globlease4", "12 nodes in all", "mean RTT (ms)", "504.0", "light RTT floor (ms)", "us-west"} {
		if !strings.Contains(out, want) {
			t.Errorf("WriteMatrix output lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := WriteList(&b); err != nil {
		t.Fatal(err)
	}
	for _, name := range PresetNames() {
		if !strings.Contains(b.String(), "\n"+name+": ") {
			t.Errorf("WriteList output lacks world %q", name)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(goodYAML))
	f.Add([]byte(""))
	f.Add([]byte("name: x\nregions: [{name: a}]\nnodes_per_region: 1\n"))
	f.Add([]byte("name: x\nregions: [{name: a}, {name: b}]\nnodes_per_region: 1\nlinks: [{from: a, to: b, one_way_ms: 1, jitter: {dist: normal, mean_ms: 2}}]\n"))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Add([]byte("name: x\n<<: {description: y}\n"))
	f.Add([]byte("- 1\n- 2\n"))
	f.Add([]byte("name: x\nregions: [{name: a, lat: 1e999}]\nnodes_per_region: 99999999999999999999\n"))
	for _, n := range PresetNames() {
		data, err := presetFS.ReadFile("presets/" + n + ".yaml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := Parse(data)
		if err != nil {
			if w != nil {
				t.Errorf("Parse returned a world and an error")
			}
			if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
				t.Errorf("Parse error not one line: %q", msg)
			}
			return
		}
		r := rand.New(rand.NewPCG(1, 2))
		for a := range w.Regions {
			for b := range w.Regions {
				if d := w.Delay(a, b, r); d < w.BaseDelay(a, b) {
					t.Errorf("Delay(%d, %d) = %v below base %v", a, b, d, w.BaseDelay(a, b))
				}
			}
		}
		if len(w.Regions) <= 50 {
			if err := WriteMatrix(&bytes.Buffer{}, w); err != nil {
				t.Errorf("WriteMatrix: %v", err)
			}
		}
	})
}

// TestFasterThanLight: a link below the great-circle distance at c is
// rejected with the link, the distance and the minimum named; one below
// fibre speed but above c is accepted with a warning; the reverse
// direction of a one-way link is checked too.
func TestFasterThanLight(t *testing.T) {
	// east (39, -77) to west (37, -122): about 3,900 km, 13.0 ms at c,
	// 19.5 ms in fibre.
	for _, tc := range []struct {
		name, yaml string
		err        string // "" if accepted
		warn       string // "" if no warning expected
	}{
		{"ok", goodYAML, "", ""},
		{"vacuum", strings.Replace(goodYAML, "one_way_ms: 40", "one_way_ms: 12", 1),
			`world "tiny": links[0]: one_way_ms 12 from "east" to "west" is faster than light: the regions are 3909 km apart, at least 13.04 ms one way`, ""},
		{"fibre", strings.Replace(goodYAML, "one_way_ms: 40", "one_way_ms: 15", 1),
			"", `links[0]: one_way_ms 15 from "east" to "west" is faster than light in fibre (3909 km: 19.54 ms in fibre, 13.04 ms in vacuum)`},
		{"reverse", goodYAML + "  - {from: west, to: east, one_way_ms: 5}\n",
			`world "tiny": links[1]: one_way_ms 5 from "west" to "east" is faster than light`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Parse([]byte(tc.yaml))
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("Parse: %v", err)
			case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
				t.Fatalf("Parse error = %v; want prefix %q", err, tc.err)
			case err != nil:
				return
			}
			warns := strings.Join(w.Warnings(), "\n")
			if tc.warn == "" && warns != "" || !strings.Contains(warns, tc.warn) || strings.Count(warns, "\n") > 0 {
				t.Fatalf("Warnings() = %q; want %q", warns, tc.warn)
			}
			var b strings.Builder
			if err := WriteMatrix(&b, w); err != nil {
				t.Fatal(err)
			}
			if tc.warn != "" && !strings.Contains(b.String(), "warning: "+tc.warn) {
				t.Errorf("WriteMatrix does not print the warning:\n%s", b.String())
			}
		})
	}
}
