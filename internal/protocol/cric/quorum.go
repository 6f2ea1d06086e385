package cric

// Hierarchical quorums (seed 001 §5.3, Definition V.1): the acceptors are
// Regions × ReplicasPerRegion; a set of acceptors holds a quorum when
// RegionQuorum regions each hold ReplicaQuorum of their replicas, and a
// super quorum likewise with the super sizes (the fast round's).

// shape is a keyspace's quorum sizes; acceptor a is replica a%m of region
// a/m (in Config.Regions order).
type shape struct {
	n, m   int // regions, replicas per region
	q, qm  int // quorum: regions, replicas in each
	s, sm  int // super quorum: regions, replicas in each
	accept int // n·m
}

func shapeOf(c Config) shape {
	n, m := len(c.Regions), c.ReplicasPerRegion
	return shape{n: n, m: m, q: c.RegionQuorum, qm: c.ReplicaQuorum, s: c.RegionSuperQuorum, sm: c.ReplicaSuperQuorum, accept: n * m}
}

// holds reports whether the acceptors in(a) include a hierarchical quorum
// of regions regions with per replicas each.
func (h shape) holds(in func(a int) bool, regions, per int) bool {
	full := 0
	for g := 0; g < h.n; g++ {
		k := 0
		for i := 0; i < h.m; i++ {
			if in(g*h.m + i) {
				k++
			}
		}
		if k >= per {
			full++
		}
	}
	return full >= regions
}

// quorum reports whether in holds a quorum.
func (h shape) quorum(in func(a int) bool) bool { return h.holds(in, h.q, h.qm) }

// super reports whether in holds a super quorum.
func (h shape) super(in func(a int) bool) bool { return h.holds(in, h.s, h.sm) }
