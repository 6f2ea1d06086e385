package cost

import (
	"fmt"

	"github.com/lightcone/lightcone/internal/topo"
)

// Internet is the region index Transfer takes for a destination outside
// every region of the world (clients on the internet, another cloud).
const Internet = -1

// Rates are a world's prices, region by region (by index into
// World.Regions): what the cost models of SPANStore, CosTLO and CRIC read
// (price of a request, a GiB-month, a GiB sent from one region to another,
// a VM-hour), and what Bill charges a run's Usage with.
type Rates struct {
	regions []regionRates
}

type regionRates struct {
	name      string // the world's
	provider  string
	cloud     string // the provider's region name
	continent string
	cat       *Catalogue // nil: unpriced
	p         Prices
}

// ForWorld resolves w's regions against the catalogues. A region whose
// provider has a catalogue must name its cloud_region and the catalogue
// must list it (an error otherwise: a world that claims a provider is
// priced). Regions of other providers (local, emulated, sim) are unpriced:
// every price is 0 there and Bill lists them.
func ForWorld(w *topo.World, cats Catalogues) (*Rates, error) {
	r := &Rates{}
	for _, reg := range w.Regions {
		rr := regionRates{name: reg.Name, provider: reg.Provider, cloud: reg.CloudRegion}
		if c := cats[reg.Provider]; c != nil {
			if reg.CloudRegion == "" {
				return nil, fmt.Errorf("cost: world %s: region %s (provider %s) has no cloud_region to price it by", w.Name, reg.Name, reg.Provider)
			}
			p, cont, ok := c.resolved(reg.CloudRegion)
			if !ok {
				return nil, fmt.Errorf("cost: world %s: region %s: the %s catalogue has no region %q", w.Name, reg.Name, reg.Provider, reg.CloudRegion)
			}
			rr.cat, rr.p, rr.continent = c, p, cont
		}
		r.regions = append(r.regions, rr)
	}
	return r, nil
}

// Priced reports whether region has a catalogue.
func (r *Rates) Priced(region int) bool { return r.regions[region].cat != nil }

// RequestUSD is the price of one storage-service operation (storagesvc.Op's
// name, or an S3 request's: get, head, put, list, delete) in region: the
// sum of the request classes the provider charges it as. An op the
// catalogue does not map is an error.
func (r *Rates) RequestUSD(region int, op string) (float64, error) {
	rr := r.regions[region]
	if rr.cat == nil {
		return 0, nil
	}
	classes, ok := rr.cat.Ops[op]
	if !ok {
		return 0, fmt.Errorf("cost: %s catalogue does not price operation %q", rr.provider, op)
	}
	usd := 0.0
	for _, cl := range classes {
		p := rr.p.Requests[cl]
		usd += p.USD / float64(p.Per)
	}
	return usd, nil
}

// StorageUSDPerGBMonth is the price of a GiB stored a month in region.
func (r *Rates) StorageUSDPerGBMonth(region int) float64 {
	rr := r.regions[region]
	if rr.cat == nil {
		return 0
	}
	return rr.p.StorageGBMonth.USD
}

// EgressClass is how a transfer from region from to region to (or
// Internet) is priced: by the sender's provider, intra-region, to the same
// or another continent within the provider, or out of it.
func (r *Rates) EgressClass(from, to int) string {
	switch {
	case to == from:
		return EgressIntraRegion
	case to == Internet:
		return EgressInternet
	}
	a, b := r.regions[from], r.regions[to]
	switch {
	case a.provider != b.provider:
		return EgressInternet
	case a.cloud == b.cloud:
		return EgressIntraRegion // two world regions in one provider region
	case a.continent == b.continent:
		return EgressSameContinent
	}
	return EgressOtherContinent
}

// EgressUSDPerGB is the price of a GiB sent from region from to region to
// (or Internet), charged by the sender's provider.
func (r *Rates) EgressUSDPerGB(from, to int) float64 {
	rr := r.regions[from]
	if rr.cat == nil {
		return 0
	}
	return rr.p.EgressGB[r.EgressClass(from, to)].USD
}

// VMUSDPerHour is the price of an hour of a VM of size in region (0 in an
// unpriced region); a size the catalogue does not list is an error.
func (r *Rates) VMUSDPerHour(region int, size string) (float64, error) {
	rr := r.regions[region]
	if rr.cat == nil {
		return 0, nil
	}
	p := rr.p.VMHour[size]
	if p == nil {
		return 0, fmt.Errorf("cost: %s catalogue has no VM size %q in %s (has %v)", rr.provider, size, rr.cloud, sortedKeys(rr.p.VMHour))
	}
	return p.USD, nil
}
