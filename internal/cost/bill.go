package cost

import (
	"fmt"
	"slices"
)

// Bill is a Usage priced, in USD.
type Bill struct {
	Requests float64 `json:"requests_usd"`
	Storage  float64 `json:"storage_usd"`
	Egress   float64 `json:"egress_usd"`
	VMs      float64 `json:"vms_usd"`
	Total    float64 `json:"total_usd"`
	// ByRegion is each region's share (of the sender, for egress).
	ByRegion []RegionBill `json:"by_region"`
	// Unpriced are the regions without a catalogue, whose usage costs 0.
	Unpriced []string `json:"unpriced,omitempty"`
}

// RegionBill is one region's part of a Bill.
type RegionBill struct {
	Region   string  `json:"region"`
	Requests float64 `json:"requests_usd"`
	Storage  float64 `json:"storage_usd"`
	Egress   float64 `json:"egress_usd"`
	VMs      float64 `json:"vms_usd"`
}

// Bill prices u. The usage must come from a world with r's regions.
func (r *Rates) Bill(u *Usage) (*Bill, error) {
	if len(u.Regions) != len(r.regions) {
		return nil, fmt.Errorf("cost: usage of %d regions priced with rates of %d", len(u.Regions), len(r.regions))
	}
	b := &Bill{}
	for i := range r.regions {
		rb := RegionBill{Region: r.regions[i].name}
		if !r.Priced(i) {
			b.Unpriced = append(b.Unpriced, rb.Region)
		}
		for _, op := range sortedKeys(u.Requests[i]) {
			p, err := r.RequestUSD(i, op)
			if err != nil {
				return nil, err
			}
			rb.Requests += p * float64(u.Requests[i][op])
		}
		rb.Storage = r.StorageUSDPerGBMonth(i) * u.StoredGBMonths[i]
		for to, bytes := range u.TransferBytes[i] {
			if to == len(r.regions) {
				to = Internet
			}
			rb.Egress += r.EgressUSDPerGB(i, to) * float64(bytes) / GiB
		}
		b.ByRegion = append(b.ByRegion, rb)
	}
	hours := u.Seconds / 3600
	for _, v := range u.VMs {
		p, err := r.VMUSDPerHour(v.Region, v.Size)
		if err != nil {
			return nil, fmt.Errorf("cost: VMs of role %s: %w", v.Role, err)
		}
		b.ByRegion[v.Region].VMs += p * hours * float64(v.Count)
	}
	for _, rb := range b.ByRegion {
		b.Requests += rb.Requests
		b.Storage += rb.Storage
		b.Egress += rb.Egress
		b.VMs += rb.VMs
	}
	b.Total = b.Requests + b.Storage + b.Egress + b.VMs
	slices.Sort(b.Unpriced)
	return b, nil
}
