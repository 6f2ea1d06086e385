// Package ring places keys on nodes: one consistent-hashing ring per region
// (GlobLease §III.A: every region's ring holds the whole keyspace), so a key
// has replicas in every region that the keyspace replicates to.
package ring

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// TokensPerNode is how many points each node owns on its region's ring;
// enough to spread keys within a few percent across a handful of nodes.
const TokensPerNode = 64

type token struct {
	hash uint64
	node wire.NodeID
}

// Ring maps keys to replica nodes, per region.
type Ring struct {
	regions [][]token // sorted by hash
	nodes   []int     // distinct nodes per region
}

// New builds the rings of topology t.
func New(t *topo.Topology) *Ring {
	r := &Ring{regions: make([][]token, len(t.ByRegion)), nodes: make([]int, len(t.ByRegion))}
	for ri, ids := range t.ByRegion {
		r.nodes[ri] = len(ids)
		for _, id := range ids {
			for i := 0; i < TokensPerNode; i++ {
				h := Hash(t.Nodes[id].Name) ^ mix(uint64(i)+1)
				r.regions[ri] = append(r.regions[ri], token{hash: mix(h), node: id})
			}
		}
		slices.SortFunc(r.regions[ri], func(a, b token) int {
			if a.hash != b.hash {
				if a.hash < b.hash {
					return -1
				}
				return 1
			}
			return int(a.node) - int(b.node)
		})
	}
	return r
}

// Hash is the key hash: 64-bit FNV-1a finished with a mixer, so neighbouring
// keys spread over the ring.
func Hash(key string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	return mix(h)
}

// mix is the splitmix64 finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Replicas appends to dst the n distinct nodes of region that own key: the
// first n nodes met walking the region's ring clockwise from the key's hash.
// n is capped at the region's node count.
func (r *Ring) Replicas(dst []wire.NodeID, region int, key string, n int) []wire.NodeID {
	return r.replicas(dst, region, Hash(key), n)
}

// Owner is key's first replica in region, Replicas(nil, region, key,
// 1)[0], without building a slice (a lease gateway asks it on every
// read); region must have a node.
func (r *Ring) Owner(region int, key string) wire.NodeID {
	toks := r.regions[region]
	if r.nodes[region] == 1 {
		return toks[0].node
	}
	return toks[search(toks, Hash(key))%len(toks)].node
}

// ReplicasEach appends key's replicas in every region r, perRegion[r] of
// them, region by region: Replicas for each, with the key hashed once.
func (r *Ring) ReplicasEach(dst []wire.NodeID, key string, perRegion []int) []wire.NodeID {
	// One allocation at most, not one per doubling (callers pass nil for
	// a slice they keep).
	total := 0
	for _, n := range perRegion {
		total += max(n, 0)
	}
	dst = slices.Grow(dst, total)
	h := Hash(key)
	for region, n := range perRegion {
		dst = r.replicas(dst, region, h, n)
	}
	return dst
}

func (r *Ring) replicas(dst []wire.NodeID, region int, h uint64, n int) []wire.NodeID {
	toks := r.regions[region]
	n = min(n, r.nodes[region])
	if n <= 0 {
		return dst
	}
	if r.nodes[region] == 1 {
		return append(dst, toks[0].node) // the region's only node
	}
	i := search(toks, h)
	start := len(dst)
	for j := 0; j < len(toks) && len(dst)-start < n; j++ {
		id := toks[(i+j)%len(toks)].node
		if !slices.Contains(dst[start:], id) {
			dst = append(dst, id)
		}
	}
	return dst
}

// search is the index of the first token at or after hash h (len(toks)
// if none: the walk wraps around).
func search(toks []token, h uint64) int {
	i, _ := slices.BinarySearchFunc(toks, h, func(t token, h uint64) int {
		if t.hash < h {
			return -1
		}
		if t.hash > h {
			return 1
		}
		return 0
	})
	return i
}

// ValidatePlacement checks a replicas-per-region setting against a world
// with nodesPerRegion nodes in each region; errors are prefixed with who
// ("quorum", "meteor") and name the setting.
func ValidatePlacement(who string, replicasPerRegion, nodesPerRegion []int) error {
	if len(replicasPerRegion) != len(nodesPerRegion) {
		return fmt.Errorf("%s: replicas_per_region has %d entries; the world has %d regions", who, len(replicasPerRegion), len(nodesPerRegion))
	}
	total := 0
	for r, n := range replicasPerRegion {
		if n < 0 || n > nodesPerRegion[r] {
			return fmt.Errorf("%s: replicas_per_region[%d] = %d; must be between 0 and the region's %d nodes", who, r, n, nodesPerRegion[r])
		}
		total += n
	}
	if total == 0 {
		return fmt.Errorf("%s: replicas_per_region places no replica anywhere", who)
	}
	return nil
}

// PerRegion is a count per region of a world, in the world's region order
// (replicas of each key in every region). In configuration it is either one
// number, the same in every region, or a list with one entry per region.
type PerRegion []int

// UnmarshalYAML accepts a number or a list of numbers.
func (p *PerRegion) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var v int
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: replicas per region: want a number or a list of numbers, one per region", n.Line)
		}
		*p = PerRegion{v}
		return nil
	}
	var vs []int
	if err := n.Decode(&vs); err != nil {
		return fmt.Errorf("line %d: replicas per region: want a number or a list of numbers, one per region", n.Line)
	}
	*p = vs
	return nil
}

// Expand returns p for a world of regions regions: nil is def in every
// region, and a single number is that number in every region.
func (p PerRegion) Expand(regions, def int) PerRegion {
	switch {
	case len(p) == 0:
		p = PerRegion{def}
		fallthrough
	case len(p) == 1 && regions != 1:
		out := make(PerRegion, regions)
		for i := range out {
			out[i] = p[0]
		}
		return out
	}
	return p
}
