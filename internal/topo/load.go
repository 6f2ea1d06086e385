package topo

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/yamlfile"
)

// Defaults for a world whose YAML omits intra entirely.
const (
	DefaultIntraOneWayMs = 0.25
	DefaultIntraJitterMs = 0.05
)

// maxDelayMs bounds every delay and jitter mean (one hour). Larger values are
// almost certainly a unit mistake and would overflow time.Duration maths.
const maxDelayMs = 3600 * 1000

// DefaultIntra is the intra-region link used when a world omits intra.
func DefaultIntra() Link {
	return Link{
		OneWayMs: DefaultIntraOneWayMs,
		Jitter:   Jitter{Dist: DistExponential, MeanMs: DefaultIntraJitterMs},
		Source:   "default: typical same-region, cross-rack one-way delay",
	}
}

// worldFile mirrors World's YAML fields; Intra is a pointer so an omitted
// intra can be told apart from an explicit one.
type worldFile struct {
	Name           string   `yaml:"name"`
	Description    string   `yaml:"description"`
	Source         string   `yaml:"source"`
	Regions        []Region `yaml:"regions"`
	NodesPerRegion int      `yaml:"nodes_per_region"`
	Intra          *Link    `yaml:"intra"`
	Links          []Link   `yaml:"links"`

	StorageServices []StorageService `yaml:"storage_services"`
}

// Parse decodes a world from YAML and validates it. Unknown fields, wrongly
// typed values and every inconsistency Validate finds are errors; each error
// is a single line naming the offending field (and, for the YAML's own
// mistakes, its line). Parse never panics.
func Parse(data []byte) (*World, error) { return parse("", data) }

// parse is Parse of the contents of file ("" if none): the YAML's own
// mistakes are errors naming the file and the line (yamlfile.Decode).
func parse(file string, data []byte) (w *World, err error) {
	defer func() {
		if p := recover(); p != nil {
			w, err = nil, yamlfile.InFile(file, fmt.Errorf("world: malformed YAML: %v", p))
		}
	}()
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, yamlfile.InFile(file, errors.New("world: empty file (expected a mapping with fields "+strings.Join(yamlfile.FieldNames(worldFile{}), ", ")+")"))
	}
	what := "world"
	var named struct {
		Name string `yaml:"name"`
	}
	if yaml.Unmarshal(data, &named) == nil && named.Name != "" {
		what = fmt.Sprintf("world %q", named.Name)
	}
	var wf worldFile
	if err := yamlfile.Decode(file, data, &wf, what); err != nil {
		return nil, err
	}
	w = &World{
		Name:           wf.Name,
		Description:    wf.Description,
		Source:         wf.Source,
		Regions:        wf.Regions,
		NodesPerRegion: wf.NodesPerRegion,
		Links:          wf.Links,

		StorageServices: wf.StorageServices,
	}
	if wf.Intra != nil {
		w.Intra = *wf.Intra
		w.intraSet = true
	} else {
		w.Intra = DefaultIntra()
		w.intraSet = true
	}
	if err := w.Validate(); err != nil {
		return nil, yamlfile.InFile(file, err)
	}
	return w, nil
}

// Load reads and parses a world YAML file. Errors are prefixed by the path.
func Load(path string) (*World, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parse(path, data)
}

// Validate checks the world and fills its region-to-region delay matrix. A
// link given once covers both directions unless the reverse is also given.
// If Intra is the zero Link and the world was not parsed from YAML with an
// explicit intra, the default intra (DefaultIntra) is used. The error, if
// any, is a single line naming the offending field.
func (w *World) Validate() error {
	w.delay = nil
	prefix := "world: "
	if w.Name != "" {
		prefix = fmt.Sprintf("world %q: ", w.Name)
	}
	fail := func(format string, args ...any) error {
		return errors.New(prefix + fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(w.Name) == "" {
		return fail("name: missing (every world needs a short name, e.g. \"myworld\")")
	}
	if len(w.Regions) == 0 {
		return fail("regions: none given (a world needs at least one region)")
	}
	if w.NodesPerRegion < 1 {
		return fail("nodes_per_region: %d, must be at least 1", w.NodesPerRegion)
	}
	index := make(map[string]int, len(w.Regions))
	for i, r := range w.Regions {
		f := fmt.Sprintf("regions[%d]", i)
		if strings.TrimSpace(r.Name) == "" {
			return fail("%s.name: missing", f)
		}
		if j, dup := index[r.Name]; dup {
			return fail("%s.name: duplicate region %q (also regions[%d])", f, r.Name, j)
		}
		index[r.Name] = i
		if math.IsNaN(r.Lat) || r.Lat < -90 || r.Lat > 90 {
			return fail("%s.lat: %v is outside [-90, 90] (degrees north)", f, r.Lat)
		}
		if math.IsNaN(r.Long) || r.Long < -180 || r.Long > 180 {
			return fail("%s.long: %v is outside [-180, 180] (degrees east)", f, r.Long)
		}
	}
	known := func() string {
		names := make([]string, len(w.Regions))
		for i, r := range w.Regions {
			names[i] = strconv.Quote(r.Name)
		}
		return strings.Join(names, ", ")
	}

	if !w.intraSet && w.Intra == (Link{}) {
		w.Intra = DefaultIntra()
	}
	if err := checkLinkModel(w.Intra, "intra"); err != nil {
		return errors.New(prefix + err.Error())
	}

	n := len(w.Regions)
	delay := make([][]Link, n)
	explicit := make([][]int, n) // index into Links+1 of the explicit link, 0 if none
	for i := range delay {
		delay[i] = make([]Link, n)
		explicit[i] = make([]int, n)
	}
	for k, l := range w.Links {
		f := fmt.Sprintf("links[%d]", k)
		if l.From == "" {
			return fail("%s.from: missing (known regions: %s)", f, known())
		}
		if l.To == "" {
			return fail("%s.to: missing (known regions: %s)", f, known())
		}
		a, ok := index[l.From]
		if !ok {
			return fail("%s.from: unknown region %q (known: %s)", f, l.From, known())
		}
		b, ok := index[l.To]
		if !ok {
			return fail("%s.to: unknown region %q (known: %s)", f, l.To, known())
		}
		if a == b {
			return fail("%s: from and to are both %q (use intra for delays within a region)", f, l.From)
		}
		if prev := explicit[a][b]; prev != 0 {
			return fail("%s: duplicate link from %q to %q (also links[%d])", f, l.From, l.To, prev-1)
		}
		if err := checkLinkModel(l, f); err != nil {
			return errors.New(prefix + err.Error())
		}
		explicit[a][b] = k + 1
		delay[a][b] = l
	}
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			switch {
			case a == b:
				l := w.Intra
				l.From, l.To = w.Regions[a].Name, w.Regions[a].Name
				delay[a][b] = l
			case explicit[a][b] != 0:
			case explicit[b][a] != 0:
				l := delay[b][a]
				l.From, l.To = l.To, l.From
				delay[a][b] = l
			default:
				return fail("missing link between %q and %q (add a links entry with from: %s, to: %s)",
					w.Regions[a].Name, w.Regions[b].Name, w.Regions[a].Name, w.Regions[b].Name)
			}
		}
	}
	if err := w.validateStorage(index); err != nil {
		return errors.New(prefix + err.Error())
	}
	w.warnings = nil
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			// Distance is symmetric: a link used both ways is checked once.
			k := explicit[a][b]
			if a == b || k == 0 {
				continue
			}
			f := fmt.Sprintf("links[%d]", k-1)
			km := distanceKm(w.Regions[a], w.Regions[b])
			d := delay[a][b].OneWayMs
			vac, fib := km/VacuumKmPerSec*1000, km/FibreKmPerSec*1000
			switch {
			case d < vac*(1-1e-9):
				return fail("%s: one_way_ms %g from %q to %q is faster than light: the regions are %.0f km apart, at least %.2f ms one way at the speed of light in vacuum (%.2f ms in fibre); raise the delay or fix the coordinates",
					f, d, w.Regions[a].Name, w.Regions[b].Name, km, vac, fib)
			case d < fib*(1-1e-9):
				w.warnings = append(w.warnings, fmt.Sprintf("%s: one_way_ms %g from %q to %q is faster than light in fibre (%.0f km: %.2f ms in fibre, %.2f ms in vacuum); only a straight microwave or laser link could do it",
					f, d, w.Regions[a].Name, w.Regions[b].Name, km, fib, vac))
			}
		}
	}
	w.delay = delay
	return nil
}

// Warnings lists what Validate found possible but suspicious: links faster
// than light in fibre (but not in vacuum, which Validate rejects). Callers
// that load a world print them (WriteMatrix does).
func (w *World) Warnings() []string { return w.warnings }

// checkLinkModel checks a link's delay and jitter; f names the link field.
func checkLinkModel(l Link, f string) error {
	if err := checkMs(l.OneWayMs, f+".one_way_ms"); err != nil {
		return err
	}
	switch l.Jitter.Dist {
	case "", DistNone:
		if l.Jitter.MeanMs != 0 {
			return fmt.Errorf("%s.jitter.mean_ms: %v given but dist is %q (set dist to exponential, uniform or normal, or drop mean_ms)", f, l.Jitter.MeanMs, l.Jitter.Dist)
		}
	case DistExponential, DistUniform, DistNormal:
	default:
		return fmt.Errorf("%s.jitter.dist: unknown distribution %q (valid: %s)", f, l.Jitter.Dist, strings.Join(Dists, ", "))
	}
	return checkMs(l.Jitter.MeanMs, f+".jitter.mean_ms")
}

func checkMs(v float64, f string) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%s: %v is not a finite number of milliseconds", f, v)
	case v < 0:
		return fmt.Errorf("%s: %v is negative (delays are milliseconds, at least 0)", f, v)
	case v > maxDelayMs:
		return fmt.Errorf("%s: %v ms is more than an hour (delays are in milliseconds)", f, v)
	}
	return nil
}

// oneLine folds a multi-line message (yaml.v3's unmarshal errors) into one.
func oneLine(s string) string {
	parts := strings.Fields(strings.ReplaceAll(s, "\n", " "))
	return strings.Join(parts, " ")
}
