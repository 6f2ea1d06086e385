package cost

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/lightcone/lightcone/internal/yamlfile"
)

//go:embed prices/*.yaml
var pricesFS embed.FS

// Egress classes: how a transfer is priced, by where it goes from the
// sending region (the sender's provider charges it).
const (
	EgressIntraRegion    = "intra_region"    // within one provider region
	EgressSameContinent  = "same_continent"  // to another region of the provider, same continent
	EgressOtherContinent = "other_continent" // to another region of the provider, elsewhere
	EgressInternet       = "internet"        // out of the provider: the internet or another cloud
)

var egressClasses = []string{EgressIntraRegion, EgressSameContinent, EgressOtherContinent, EgressInternet}

// Catalogue is one provider's price list (a prices/<provider>.yaml file):
// storage, requests by class, egress by class and VMs by size, per region,
// each price with its source. Its format is documented in docs/cost.md.
type Catalogue struct {
	Provider string `yaml:"provider"`
	Currency string `yaml:"currency"` // USD: the only one Bill adds up
	Service  string `yaml:"service"`  // which product and tier the prices are of
	// Sources are where prices come from, by the id prices cite.
	Sources map[string]Source `yaml:"sources"`
	// Ops maps each storage-service operation (storagesvc.Op's names) to
	// the request classes the provider charges it as: one entry per
	// provider request it takes.
	Ops map[string][]string `yaml:"ops"`
	// Defaults apply to every region, which may override any of them.
	Defaults Prices `yaml:"defaults"`
	// Regions by the provider's own region name (topo.Region.CloudRegion).
	Regions map[string]RegionPrices `yaml:"regions"`
}

// Source is one place prices were read.
type Source struct {
	URL       string `yaml:"url"`
	Retrieved string `yaml:"retrieved"` // YYYY-MM-DD
	Note      string `yaml:"note"`      // what was read there
}

// Prices is a set of prices; any may be absent (the defaults' then apply).
type Prices struct {
	// StorageGBMonth is per GiB (2^30 bytes) stored for a month (730 h).
	StorageGBMonth *Price `yaml:"storage_gb_month"`
	// Requests by class, each per Per requests.
	Requests map[string]*Price `yaml:"requests"`
	// EgressGB by egress class, per GiB sent.
	EgressGB map[string]*Price `yaml:"egress_gb"`
	// VMHour by VM size (the provider's name), per hour.
	VMHour map[string]*Price `yaml:"vm_hour"`
}

// RegionPrices are one region's continent and the prices it overrides.
type RegionPrices struct {
	Continent string `yaml:"continent"`
	// Assumption says why the region's prices are (partly) the defaults
	// rather than its own list prices, when they are.
	Assumption string `yaml:"assumption"`
	Prices     `yaml:",inline"`
}

// Price is one list price in the catalogue's currency: USD per unit (per
// Per requests for a request class). It cites a Source, or else states the
// Assumption it rests on: no price is given without one or the other.
type Price struct {
	USD        float64 `yaml:"usd"`
	Per        int     `yaml:"per"`
	Source     string  `yaml:"source"`
	Assumption string  `yaml:"assumption"`
}

// Catalogues are price lists by provider name.
type Catalogues map[string]*Catalogue

// Builtin returns the catalogues shipped in prices/ (Azure and AWS),
// parsed and checked.
func Builtin() (Catalogues, error) {
	entries, err := fs.ReadDir(pricesFS, "prices")
	if err != nil {
		return nil, err
	}
	cats := Catalogues{}
	for _, e := range entries {
		data, err := pricesFS.ReadFile(path.Join("prices", e.Name()))
		if err != nil {
			return nil, err
		}
		c, err := ParseCatalogue(data)
		if err != nil {
			return nil, fmt.Errorf("cost: prices/%s: %w", e.Name(), err)
		}
		if cats[c.Provider] != nil {
			return nil, fmt.Errorf("cost: prices/%s: a second catalogue for provider %q", e.Name(), c.Provider)
		}
		cats[c.Provider] = c
	}
	return cats, nil
}

// MustBuiltin is Builtin for callers that cannot go on without prices.
func MustBuiltin() Catalogues {
	c, err := Builtin()
	if err != nil {
		panic(err)
	}
	return c
}

// ParseCatalogue decodes a catalogue strictly (unknown fields are errors)
// and checks it (Check).
func ParseCatalogue(data []byte) (*Catalogue, error) {
	var c Catalogue
	if err := yamlfile.Decode("", data, &c, "catalogue"); err != nil {
		return nil, err
	}
	return &c, c.Check()
}

// Bounds that catch a unit mistake (a per-1,000 price under per: 10000, a
// monthly VM price given as hourly): no list price of the products these
// catalogues cover comes near them.
const (
	maxStorageGBMonth = 1.0  // USD per GiB-month
	maxRequestUSD     = 1e-3 // USD per single request
	maxEgressGB       = 1.0  // USD per GiB
	maxVMHour         = 50.0 // USD per hour
)

// Check verifies the catalogue: currency USD; every price cites a known
// source (with a URL and a retrieval date) or states an assumption, is
// non-negative and within its unit's bounds; request prices say per 1,000
// or 10,000; every op maps to request classes the defaults price; every
// region names its continent; the defaults price storage, every egress
// class and at least one VM size.
func (c *Catalogue) Check() error {
	if c.Provider == "" {
		return fmt.Errorf("provider: required")
	}
	if c.Currency != "USD" {
		return fmt.Errorf("currency: %q (only USD is supported)", c.Currency)
	}
	for _, id := range sortedKeys(c.Sources) {
		s := c.Sources[id]
		if !strings.HasPrefix(s.URL, "https://") {
			return fmt.Errorf("sources.%s.url: %q is not an https URL", id, s.URL)
		}
		if len(s.Retrieved) != 10 || s.Retrieved[4] != '-' || s.Retrieved[7] != '-' {
			return fmt.Errorf("sources.%s.retrieved: %q (want YYYY-MM-DD)", id, s.Retrieved)
		}
	}
	d := c.Defaults
	if d.StorageGBMonth == nil {
		return fmt.Errorf("defaults.storage_gb_month: required")
	}
	for _, e := range egressClasses {
		if d.EgressGB[e] == nil {
			return fmt.Errorf("defaults.egress_gb.%s: required", e)
		}
	}
	if len(d.VMHour) == 0 {
		return fmt.Errorf("defaults.vm_hour: at least one size required")
	}
	if err := c.checkPrices("defaults", d); err != nil {
		return err
	}
	for _, op := range sortedKeys(c.Ops) {
		if len(c.Ops[op]) == 0 {
			return fmt.Errorf("ops.%s: no request class", op)
		}
		for _, cl := range c.Ops[op] {
			if d.Requests[cl] == nil {
				return fmt.Errorf("ops.%s: request class %q has no price in defaults.requests", op, cl)
			}
		}
	}
	for _, op := range []string{"get", "head", "put", "put_meta", "list", "delete"} {
		if c.Ops[op] == nil {
			return fmt.Errorf("ops.%s: required (every storage-service operation is priced)", op)
		}
	}
	for _, name := range sortedKeys(c.Regions) {
		r := c.Regions[name]
		if r.Continent == "" {
			return fmt.Errorf("regions.%s.continent: required", name)
		}
		if err := c.checkPrices("regions."+name, r.Prices); err != nil {
			return err
		}
		for _, cl := range sortedKeys(r.Requests) {
			if d.Requests[cl] == nil {
				return fmt.Errorf("regions.%s.requests.%s: a class the defaults do not price", name, cl)
			}
		}
		for _, e := range sortedKeys(r.EgressGB) {
			if !slices.Contains(egressClasses, e) {
				return fmt.Errorf("regions.%s.egress_gb.%s: unknown egress class (valid: %s)", name, e, strings.Join(egressClasses, ", "))
			}
		}
	}
	return nil
}

func (c *Catalogue) checkPrices(at string, p Prices) error {
	if err := c.checkPrice(at+".storage_gb_month", p.StorageGBMonth, maxStorageGBMonth, false); err != nil {
		return err
	}
	for _, cl := range sortedKeys(p.Requests) {
		if err := c.checkPrice(at+".requests."+cl, p.Requests[cl], maxRequestUSD, true); err != nil {
			return err
		}
	}
	for _, e := range sortedKeys(p.EgressGB) {
		if !slices.Contains(egressClasses, e) {
			return fmt.Errorf("%s.egress_gb.%s: unknown egress class (valid: %s)", at, e, strings.Join(egressClasses, ", "))
		}
		if err := c.checkPrice(at+".egress_gb."+e, p.EgressGB[e], maxEgressGB, false); err != nil {
			return err
		}
	}
	for _, s := range sortedKeys(p.VMHour) {
		if err := c.checkPrice(at+".vm_hour."+s, p.VMHour[s], maxVMHour, false); err != nil {
			return err
		}
	}
	return nil
}

func (c *Catalogue) checkPrice(at string, p *Price, maxUnit float64, request bool) error {
	if p == nil {
		return nil
	}
	switch {
	case p.Source == "" && strings.TrimSpace(p.Assumption) == "":
		return fmt.Errorf("%s: neither a source nor an assumption: every price says where it comes from", at)
	case p.Source != "" && c.Sources[p.Source].URL == "":
		return fmt.Errorf("%s.source: %q is not in sources", at, p.Source)
	case p.USD < 0:
		return fmt.Errorf("%s.usd: %v is negative", at, p.USD)
	case request && p.Per != 1000 && p.Per != 10000:
		return fmt.Errorf("%s.per: %d (request prices are per 1000 or per 10000 requests)", at, p.Per)
	case !request && p.Per != 0:
		return fmt.Errorf("%s.per: only request prices have per", at)
	}
	unit := p.USD
	if request {
		unit /= float64(p.Per)
	}
	if unit > maxUnit {
		return fmt.Errorf("%s: %v USD per unit is above %v: a unit mistake?", at, unit, maxUnit)
	}
	return nil
}

// resolved merges the defaults with a region's overrides.
func (c *Catalogue) resolved(region string) (Prices, string, bool) {
	r, ok := c.Regions[region]
	if !ok {
		return Prices{}, "", false
	}
	p := Prices{StorageGBMonth: c.Defaults.StorageGBMonth, Requests: map[string]*Price{}, EgressGB: map[string]*Price{}, VMHour: map[string]*Price{}}
	if r.StorageGBMonth != nil {
		p.StorageGBMonth = r.StorageGBMonth
	}
	for _, m := range []struct{ dst, def, over map[string]*Price }{
		{p.Requests, c.Defaults.Requests, r.Requests},
		{p.EgressGB, c.Defaults.EgressGB, r.EgressGB},
		{p.VMHour, c.Defaults.VMHour, r.VMHour},
	} {
		for k, v := range m.def { // lint:order-independent: a copy
			m.dst[k] = v
		}
		for k, v := range m.over { // lint:order-independent: a copy
			m.dst[k] = v
		}
	}
	return p, r.Continent, true
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m { // lint:order-independent: sorted below
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
