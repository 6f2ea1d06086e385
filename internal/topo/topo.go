// Package topo describes where Lightcone runs: regions, their nodes, and the
// network between them (a World), and the node-level view protocols use (a
// Topology).
package topo

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/wire"
)

// Region is a datacenter.
type Region struct {
	Name     string `yaml:"name"`
	Provider string `yaml:"provider"` // aws, azure, gcp, local, ...
	// CloudRegion is the provider's own name of the region ("us-east-1",
	// "eastus"): what a price catalogue (internal/cost) is keyed by.
	// Optional; a world whose regions are not a provider's leaves it out.
	CloudRegion string  `yaml:"cloud_region"`
	Lat         float64 `yaml:"lat"` // degrees, for the speed-of-light floor
	Long        float64 `yaml:"long"`
}

// Jitter is the random part of a one-way delay, added to the link's base
// delay. It is never negative, so the base delay is the link's floor.
type Jitter struct {
	Dist   string  `yaml:"dist"`    // none, exponential, uniform, normal (half-normal)
	MeanMs float64 `yaml:"mean_ms"` // mean of the added delay, milliseconds
}

// Link is the one-way delay model between two regions, used in both
// directions unless a link for the reverse direction is also given.
type Link struct {
	From     string  `yaml:"from"`
	To       string  `yaml:"to"`
	OneWayMs float64 `yaml:"one_way_ms"` // base (minimum) one-way delay, milliseconds
	Jitter   Jitter  `yaml:"jitter"`
	Source   string  `yaml:"source"` // where the number comes from
}

// World is a set of regions, how many nodes each runs, and the latency model
// between every pair of regions (and within each region).
type World struct {
	Name           string   `yaml:"name"`
	Description    string   `yaml:"description"`
	Source         string   `yaml:"source"` // citation for the world as a whole
	Regions        []Region `yaml:"regions"`
	NodesPerRegion int      `yaml:"nodes_per_region"`
	Intra          Link     `yaml:"intra"` // delay between nodes of one region (From/To unused)
	Links          []Link   `yaml:"links"`
	// StorageServices model the regions' storage services' response
	// times (storage.go); a region not listed answers at once.
	StorageServices []StorageService `yaml:"storage_services"`

	// storage[r] is region r's storage service model, filled by Validate.
	storage []StorageService
	// delay[i][j] is the link model from region i to region j, filled by
	// Validate; Intra on the diagonal.
	delay [][]Link
	// warnings are Validate's findings that are not errors (Warnings).
	warnings []string
	// intraSet records that Intra was given explicitly (or defaulted by
	// Parse), so Validate does not replace an explicit all-zero Intra.
	intraSet bool
}

// Delay samples a one-way delay from region a to region b.
func (w *World) Delay(a, b int, r *rand.Rand) time.Duration {
	return w.delay[a][b].Sample(r)
}

// BaseDelay is the minimum one-way delay from region a to region b.
func (w *World) BaseDelay(a, b int) time.Duration {
	return msToDuration(w.delay[a][b].OneWayMs)
}

// MeanDelay is the mean one-way delay from region a to region b.
func (w *World) MeanDelay(a, b int) time.Duration {
	l := w.delay[a][b]
	return msToDuration(l.OneWayMs + l.Jitter.MeanMs)
}

// RegionIndex returns the index of the named region, or -1.
func (w *World) RegionIndex(name string) int {
	for i, r := range w.Regions {
		if r.Name == name {
			return i
		}
	}
	return -1
}

func msToDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// Node is one server in the topology.
type Node struct {
	ID     wire.NodeID
	Region int    // index into World.Regions
	Name   string // "<region>-<i>"
}

// Topology is the node-level view of a World: every node, grouped by region.
// Protocols read it; they never modify it.
type Topology struct {
	World    *World
	Nodes    []Node
	ByRegion [][]wire.NodeID // node IDs of each region, ascending
}

// NewTopology lays out w.NodesPerRegion nodes in every region of a validated
// world. Node IDs are assigned region by region.
func NewTopology(w *World) *Topology {
	t := &Topology{World: w, ByRegion: make([][]wire.NodeID, len(w.Regions))}
	for ri, r := range w.Regions {
		for i := 0; i < w.NodesPerRegion; i++ {
			id := wire.NodeID(len(t.Nodes))
			t.Nodes = append(t.Nodes, Node{ID: id, Region: ri, Name: r.Name + "-" + itoa(i)})
			t.ByRegion[ri] = append(t.ByRegion[ri], id)
		}
	}
	return t
}

// RegionOf returns the region index of node n.
func (t *Topology) RegionOf(n wire.NodeID) int { return t.Nodes[n].Region }

// BaseDelay is the world's base (minimum) one-way delay from node a to
// node b: that of their regions.
func (t *Topology) BaseDelay(a, b wire.NodeID) time.Duration {
	return t.World.BaseDelay(t.RegionOf(a), t.RegionOf(b))
}

// MeanRTT is the mean round-trip time between nodes a and b.
func (t *Topology) MeanRTT(a, b wire.NodeID) time.Duration {
	ra, rb := t.RegionOf(a), t.RegionOf(b)
	return t.World.MeanDelay(ra, rb) + t.World.MeanDelay(rb, ra)
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}

// ProximityRank ranks every node by distance from id: rank[n] is n's
// position when nodes are ordered nearest first by mean round trip, id
// itself first, ties by node ID. Protocols use it to ask the nearest
// replicas first.
func (t *Topology) ProximityRank(id wire.NodeID) []int {
	order := make([]wire.NodeID, len(t.Nodes))
	for i := range order {
		order[i] = wire.NodeID(i)
	}
	slices.SortStableFunc(order, func(a, b wire.NodeID) int {
		if (a == id) != (b == id) {
			if a == id {
				return -1
			}
			return 1
		}
		return int(t.MeanRTT(id, a) - t.MeanRTT(id, b))
	})
	rank := make([]int, len(order))
	for i, n := range order {
		rank[n] = i
	}
	return rank
}
