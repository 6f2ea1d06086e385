package workload

import (
	"math/rand/v2"
)

type keyDist uint8

const (
	keyUniform keyDist = iota
	keyScrambledZipfian
	keyExactZipfian
	keySkewedLatest
	keyExactLatest
	keyHotspot
)

type opChoice struct {
	kind OpKind
	p    float64 // weight / total weight, as YCSB's DiscreteGenerator
}

// Generator produces the transaction phase of a YCSB core workload. It is
// not safe for concurrent use; all randomness comes from the *rand.Rand
// passed to Next, so a fixed seed gives a fixed sequence.
type Generator struct {
	spec   Spec
	hashed bool
	ops    []opChoice

	// keys[i] is KeyName(i, hashed) for every record 0..lastKey.
	keys []string
	// lastKey is YCSB's transactioninsertkeysequence.lastValue(): the newest
	// (acknowledged) record number. Inserts are acknowledged immediately.
	lastKey int64

	dist      keyDist
	uniformN  int64
	scrambled *scrambledZipfian
	exact     *exactZipf
	latest    *zipfian
	hot       *hotspot

	scanMin, scanSpan int64
	scanZipf          *zipfian
}

// NewGenerator fills in defaults (EnsureDefaults), validates s and builds a
// generator, pre-building the key strings of the record_count loaded records.
func NewGenerator(s Spec) (*Generator, error) {
	s.EnsureDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	n := int64(s.RecordCount)
	g := &Generator{
		spec:    s,
		hashed:  s.InsertOrder == InsertHashed,
		keys:    make([]string, n, n+s.expectedNewKeys()),
		lastKey: n - 1,
	}
	for i := range g.keys {
		g.keys[i] = KeyName(uint64(i), g.hashed)
	}

	total := s.ReadProportion + s.UpdateProportion + s.InsertProportion + s.ScanProportion + s.ReadModifyWriteProportion
	for _, c := range []struct {
		kind OpKind
		w    float64
	}{
		{Read, s.ReadProportion},
		{Update, s.UpdateProportion},
		{Insert, s.InsertProportion},
		{Scan, s.ScanProportion},
		{ReadModifyWrite, s.ReadModifyWriteProportion},
	} {
		if c.w > 0 {
			g.ops = append(g.ops, opChoice{c.kind, c.w / total})
		}
	}

	expected := s.expectedNewKeys()
	switch s.RequestDistribution {
	case DistUniform:
		g.dist, g.uniformN = keyUniform, n
	case DistZipfian:
		if s.ZipfExponent > 0 {
			g.dist, g.exact = keyExactZipfian, newExactZipf(n+expected, s.ZipfExponent)
		} else {
			// CoreWorkload: ScrambledZipfianGenerator(insertstart,
			// insertstart+insertcount+expectednewkeys); keys not yet
			// inserted are rejected in nextKeynum.
			g.dist, g.scrambled = keyScrambledZipfian, newScrambledZipfian(0, n+expected, s.ZipfianConstant)
		}
	case DistLatest:
		if s.ZipfExponent > 0 {
			g.dist, g.exact = keyExactLatest, newExactZipf(n+expected, s.ZipfExponent)
		} else {
			// SkewedLatestGenerator: ZipfianGenerator(basis.lastValue()),
			// i.e. items 0..recordcount-2.
			items := n - 1
			g.dist, g.latest = keySkewedLatest, newZipfian(0, items-1, s.ZipfianConstant, zetaStatic(items, s.ZipfianConstant))
		}
	case DistHotspot:
		g.dist, g.hot = keyHotspot, newHotspot(0, n-1, s.HotspotDataFraction, s.HotspotOpnFraction)
	}

	g.scanMin = int64(s.MinScanLength)
	g.scanSpan = int64(s.MaxScanLength-s.MinScanLength) + 1
	if s.ScanLengthDistribution == ScanZipfian {
		// YCSB: ZipfianGenerator(minscanlength, maxscanlength), constant 0.99.
		g.scanZipf = newZipfian(g.scanMin, int64(s.MaxScanLength), DefaultZipfianConstant,
			zetaStatic(g.scanSpan, DefaultZipfianConstant))
	}
	return g, nil
}

// Spec returns the generator's spec, with defaults applied.
func (g *Generator) Spec() Spec { return g.spec }

// KeyCount returns the number of records that exist now: record_count plus
// the inserts generated so far.
func (g *Generator) KeyCount() int { return int(g.lastKey) + 1 }

// LoadKeys returns the record_count keys of the load phase in insert order
// (record numbers 0..record_count-1).
func (g *Generator) LoadKeys() []string {
	out := make([]string, g.spec.RecordCount)
	copy(out, g.keys)
	return out
}

// Next returns the next operation. Reads, updates, scans and
// read-modify-writes pick an existing key from the request distribution;
// inserts create record number KeyCount() (YCSB's transaction-insert key
// sequence), which becomes the newest key for the latest distribution.
// Next allocates only when it inserts.
func (g *Generator) Next(r *rand.Rand) Op {
	kind := g.nextKind(r)
	switch kind {
	case Insert:
		g.lastKey++
		key := KeyName(uint64(g.lastKey), g.hashed)
		g.keys = append(g.keys, key)
		return Op{Kind: Insert, Key: key}
	case Scan:
		n := g.nextKeynum(r)
		return Op{Kind: Scan, Key: g.keys[n], KeyNum: n, ScanLen: g.nextScanLen(r)}
	default:
		return Op{Kind: kind, Key: g.keys[g.nextKeynum(r)]}
	}
}

// nextKind is YCSB's DiscreteGenerator.nextValue.
func (g *Generator) nextKind(r *rand.Rand) OpKind {
	u := r.Float64()
	for _, c := range g.ops {
		if u < c.p {
			return c.kind
		}
		u -= c.p
	}
	return g.ops[len(g.ops)-1].kind // rounding left over
}

// nextKeynum is CoreWorkload.nextKeynum: draw from the key chooser, retrying
// keys that have not been inserted yet.
func (g *Generator) nextKeynum(r *rand.Rand) int64 {
	switch g.dist {
	case keyUniform:
		return r.Int64N(g.uniformN)
	case keyHotspot:
		return g.hot.next(r)
	case keyScrambledZipfian:
		for {
			if k := g.scrambled.next(r); k <= g.lastKey {
				return k
			}
		}
	case keyExactZipfian:
		for {
			if k := g.exact.rank(r) - 1; k <= g.lastKey {
				return k
			}
		}
	case keyExactLatest:
		for {
			if off := g.exact.rank(r) - 1; off <= g.lastKey {
				return g.lastKey - off
			}
		}
	default: // keySkewedLatest: SkewedLatestGenerator.nextValue
		max := g.lastKey
		k := max - g.latest.nextLong(r, max)
		if k < 0 {
			k = 0
		} else if k > max {
			k = max
		}
		return k
	}
}

func (g *Generator) nextScanLen(r *rand.Rand) int {
	if g.scanZipf != nil {
		return int(g.scanZipf.next(r))
	}
	return int(g.scanMin + r.Int64N(g.scanSpan))
}

// ScanKeys returns the keys a scan op visits: ScanLen records in insert
// order from op's record, stopping at the newest record. (YCSB scans in key
// order; Lightcone hashes keys over the ring, so insert order is the
// meaningful neighbourhood.)
func (g *Generator) ScanKeys(op Op) []string {
	if op.Kind != Scan {
		return nil
	}
	end := min(int(op.KeyNum)+op.ScanLen, len(g.keys))
	return g.keys[op.KeyNum:end:end]
}
