package cost

import (
	"slices"
	"sync"
	"time"
)

// GiB is the unit of bytes prices are per (providers bill 2^30-byte GB).
const GiB = 1 << 30

// Month is the month storage prices are per (providers bill 730 hours).
const Month = 730 * time.Hour

// Accountant counts what a run is charged for, per region: storage-service
// requests by operation, bytes stored over time, bytes sent between
// regions (storage requests and answers, and node-to-node messages where a
// protocol's nodes are VMs), and VMs declared by the protocol. The
// simulator (sim.Config.Meter) and the real runtime's storage routing
// (svchost.Config.Meter) feed it; Usage snapshots it and Rates.Bill prices
// it. It is safe for concurrent use.
type Accountant struct {
	mu       sync.Mutex
	names    []string
	requests []map[string]int64 // [region][op]
	transfer [][]int64          // [from][to]; to == len(names): Internet
	stored   []int64            // bytes now, by region
	since    []time.Duration    // when stored last changed
	byteNs   []float64          // integral of stored bytes over time
	vms      []VM
	start    time.Duration // of the counting window (Reset)
}

// VM is a fleet of VMs a protocol runs for a role (Fast Paxos acceptors,
// CRIC propose assistants), each running for the whole counting window.
type VM struct {
	Region int    `json:"region"`
	Role   string `json:"role"`
	Size   string `json:"size"` // the provider's VM size, priced by the catalogue
	Count  int    `json:"count"`
}

// NewAccountant counts for the named regions (World.Regions' names, in
// order), from time 0.
func NewAccountant(regions []string) *Accountant {
	n := len(regions)
	a := &Accountant{names: slices.Clone(regions)}
	a.requests = make([]map[string]int64, n)
	for i := range a.requests {
		a.requests[i] = map[string]int64{}
	}
	a.transfer = make([][]int64, n)
	for i := range a.transfer {
		a.transfer[i] = make([]int64, n+1)
	}
	a.stored, a.since, a.byteNs = make([]int64, n), make([]time.Duration, n), make([]float64, n)
	return a
}

// StorageRequest counts one request region's storage service executed (op
// as storagesvc.Op names it, or the S3 request a backend made).
func (a *Accountant) StorageRequest(region int, op string) {
	a.mu.Lock()
	a.requests[region][op]++
	a.mu.Unlock()
}

// Transfer counts bytes sent from region from to region to (Internet for
// outside the world).
func (a *Accountant) Transfer(from, to int, bytes int64) {
	if to == Internet {
		to = len(a.names)
	}
	a.mu.Lock()
	a.transfer[from][to] += bytes
	a.mu.Unlock()
}

// Stored sets region's stored bytes (all its service's objects, data and
// metadata) as of at, the time since the run's start; storage is charged
// for the bytes held over time (GiB-months).
func (a *Accountant) Stored(region int, at time.Duration, bytes int64) {
	a.mu.Lock()
	a.advance(region, at)
	a.stored[region] = bytes
	a.mu.Unlock()
}

func (a *Accountant) advance(region int, at time.Duration) {
	if at > a.since[region] {
		a.byteNs[region] += float64(a.stored[region]) * float64(at-a.since[region])
		a.since[region] = at
	}
}

// AddVMs declares a fleet of VMs running throughout the counting window.
func (a *Accountant) AddVMs(v VM) {
	a.mu.Lock()
	a.vms = append(a.vms, v)
	a.mu.Unlock()
}

// Reset starts the counting window anew at at (the end of a warm-up):
// counts and stored-byte time so far are dropped; stored bytes and VMs
// are kept.
func (a *Accountant) Reset(at time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for r := range a.names {
		clear(a.requests[r])
		clear(a.transfer[r])
		a.byteNs[r], a.since[r] = 0, max(a.since[r], at)
	}
	a.start = at
}

// Usage is what a run used, per region (indexes are the world's).
type Usage struct {
	Regions []string `json:"regions"`
	// Seconds is the counting window's length.
	Seconds float64 `json:"seconds"`
	// Requests[r][op] are storage-service requests executed in region r.
	Requests []map[string]int64 `json:"requests"`
	// TransferBytes[from][to] are bytes sent; the last column is Internet.
	TransferBytes [][]int64 `json:"transfer_bytes"`
	// StoredGBMonths[r] is region r's stored bytes integrated over the
	// window, in GiB-months.
	StoredGBMonths []float64 `json:"stored_gb_months"`
	// StoredBytes[r] is region r's stored bytes at the window's end.
	StoredBytes []int64 `json:"stored_bytes"`
	VMs         []VM    `json:"vms,omitempty"`
}

// Usage snapshots the counts at at, the time since the run's start (the
// end of the counting window).
func (a *Accountant) Usage(at time.Duration) *Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	u := &Usage{Regions: slices.Clone(a.names), Seconds: (at - a.start).Seconds(), VMs: slices.Clone(a.vms)}
	for r := range a.names {
		a.advance(r, at)
		m := make(map[string]int64, len(a.requests[r]))
		for op, n := range a.requests[r] { // lint:order-independent: a copy
			m[op] = n
		}
		u.Requests = append(u.Requests, m)
		u.TransferBytes = append(u.TransferBytes, slices.Clone(a.transfer[r]))
		u.StoredGBMonths = append(u.StoredGBMonths, a.byteNs[r]/GiB/float64(Month))
		u.StoredBytes = append(u.StoredBytes, a.stored[r])
	}
	return u
}

// TotalRequests is every storage request of the usage.
func (u *Usage) TotalRequests() int64 {
	var n int64
	for _, m := range u.Requests {
		for _, c := range m { // lint:order-independent: a sum
			n += c
		}
	}
	return n
}

// InterRegionBytes is every byte sent from one region to another or to the
// Internet (what egress is charged on).
func (u *Usage) InterRegionBytes() int64 {
	var n int64
	for from, row := range u.TransferBytes {
		for to, b := range row {
			if to != from {
				n += b
			}
		}
	}
	return n
}
