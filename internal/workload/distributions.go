package workload

import (
	"math"
	"math/rand/v2"
	"strconv"
)

// FNV-64 constants as in YCSB's Utils.fnvhash64.
const (
	fnvOffsetBasis64 uint64 = 0xCBF29CE484222325
	fnvPrime64       uint64 = 1099511628211
)

// fnvHash64 is YCSB's Utils.fnvhash64: FNV-1 over the 8 little-endian bytes
// of val (Java's arithmetic shift), then Math.abs of the signed result.
// Like Java, the absolute value of math.MinInt64 stays negative.
func fnvHash64(val int64) int64 {
	h := fnvOffsetBasis64
	for i := 0; i < 8; i++ {
		octet := uint64(val & 0xff)
		val >>= 8
		h ^= octet
		h *= fnvPrime64
	}
	s := int64(h)
	if s < 0 {
		s = -s
	}
	return s
}

// KeyName returns YCSB's key for record number n, as CoreWorkload.buildKeyName
// with the default zeropadding of 1: "user" followed by the decimal of n, or,
// when hashed (insertorder=hashed), of fnvhash64(n).
func KeyName(n uint64, hashed bool) string {
	v := int64(n)
	if hashed {
		v = fnvHash64(v)
	}
	return "user" + strconv.FormatInt(v, 10)
}

// javaLong converts like Java's (long) cast: NaN → 0, saturating at the
// int64 limits. Go's own conversion is implementation-defined out of range,
// which would break determinism across platforms.
func javaLong(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// zetaDirectLimit is the largest n for which zetaStatic sums directly.
const zetaDirectLimit = 1 << 22

// zetaRange returns initial + sum_{i=st}^{n-1} 1/(i+1)^theta, YCSB's
// ZipfianGenerator.zetastatic(st, n, theta, initialsum).
func zetaRange(st, n int64, theta, initial float64) float64 {
	sum := initial
	for i := st; i < n; i++ {
		sum += 1 / math.Pow(float64(i+1), theta)
	}
	return sum
}

// zetaStatic returns sum_{i=1}^{n} i^-theta. Up to zetaDirectLimit terms it
// sums directly as YCSB does; beyond that it sums the first 10^4 terms and
// approximates the tail with Euler–Maclaurin (through the third-derivative term), whose
// relative error is far below float64 summation error over 10^10 terms.
func zetaStatic(n int64, theta float64) float64 {
	if n <= zetaDirectLimit {
		return zetaRange(0, n, theta, 0)
	}
	const m = 10000
	sum := zetaRange(0, m, theta, 0)
	a, b := float64(m+1), float64(n)
	f := func(x float64) float64 { return math.Pow(x, -theta) }
	d1 := func(x float64) float64 { return -theta * math.Pow(x, -theta-1) }
	d3 := func(x float64) float64 { return -theta * (theta + 1) * (theta + 2) * math.Pow(x, -theta-3) }
	var integral float64
	if theta == 1 {
		integral = math.Log(b / a)
	} else {
		integral = (math.Pow(b, 1-theta) - math.Pow(a, 1-theta)) / (1 - theta)
	}
	tail := integral + (f(a)+f(b))/2 + (d1(b)-d1(a))/12 - (d3(b)-d3(a))/720
	return sum + tail
}

// zipfian is YCSB's ZipfianGenerator (Gray et al., "Quickly Generating
// Billion-Record Synthetic Databases", SIGMOD 1994): item base is the most
// popular, base+1 the next, and so on. The item count may grow between
// calls (nextLong(itemcount)); zeta is then extended incrementally.
type zipfian struct {
	items        int64 // item count fixed at construction (YCSB's "items")
	base         int64
	theta        float64
	alpha        float64
	zetan        float64
	eta          float64
	zeta2theta   float64
	halfPowTheta float64 // 0.5^theta
	countForZeta int64
}

// newZipfian is ZipfianGenerator(min, max, theta, zetan).
func newZipfian(min, max int64, theta, zetan float64) *zipfian {
	z := &zipfian{
		items:        max - min + 1,
		base:         min,
		theta:        theta,
		zeta2theta:   zetaRange(0, 2, theta, 0),
		alpha:        1 / (1 - theta),
		zetan:        zetan,
		halfPowTheta: math.Pow(0.5, theta),
	}
	z.countForZeta = z.items
	z.eta = z.computeEta(z.items)
	return z
}

// computeEta returns Gray et al.'s eta for n items and the current zetan.
func (z *zipfian) computeEta(n int64) float64 {
	return (1 - math.Pow(2.0/float64(n), 1-z.theta)) / (1 - z.zeta2theta/z.zetan)
}

// nextLong is ZipfianGenerator.nextLong(itemcount).
func (z *zipfian) nextLong(r *rand.Rand, itemcount int64) int64 {
	if itemcount > z.countForZeta {
		z.zetan = zetaRange(z.countForZeta, itemcount, z.theta, z.zetan)
		z.countForZeta = itemcount
		// YCSB recomputes eta with the construction-time item count
		// ("items"), not itemcount; we keep that quirk. With fewer than 2
		// construction-time items that eta is undefined (YCSB yields NaN),
		// so we use itemcount instead.
		n := z.items
		if n < 2 {
			n = itemcount
		}
		z.eta = z.computeEta(n)
	}
	u := r.Float64()
	uz := u * z.zetan
	if uz < 1.0 {
		return z.base
	}
	if uz < 1.0+z.halfPowTheta {
		return z.base + 1
	}
	return z.base + javaLong(float64(itemcount)*math.Pow(z.eta*u-z.eta+1, z.alpha))
}

func (z *zipfian) next(r *rand.Rand) int64 { return z.nextLong(r, z.items) }

// Constants of YCSB's ScrambledZipfianGenerator. YCSB precomputed ZETAN for
// theta 0.99 over 10^10 items. (Some YCSB revisions raised ITEM_COUNT to
// 10^16 but kept this 10^10 ZETAN, an inconsistent pair; we use the
// consistent 10^10 pair.)
const (
	scrambledItemCount = 10_000_000_000
	scrambledZetan     = 26.46902820178302
	scrambledTheta     = 0.99
)

// scrambledZipfian is YCSB's ScrambledZipfianGenerator(min, max, theta): a
// zipfian rank over 10^10+1 virtual items (ZipfianGenerator(0, ITEM_COUNT))
// mapped to min + fnvhash64(rank) % itemcount, which scatters popular items
// over the key space. For theta 0.99 it uses YCSB's ZETAN; for other theta
// it computes zeta over the same 10^10+1 items (see zetaStatic).
type scrambledZipfian struct {
	gen       *zipfian
	min       int64
	itemcount int64
}

func newScrambledZipfian(min, max int64, theta float64) *scrambledZipfian {
	zetan := scrambledZetan
	if theta != scrambledTheta {
		zetan = zetaStatic(scrambledItemCount+1, theta)
	}
	return &scrambledZipfian{
		gen:       newZipfian(0, scrambledItemCount, theta, zetan),
		min:       min,
		itemcount: max - min + 1,
	}
}

func (s *scrambledZipfian) next(r *rand.Rand) int64 {
	v := fnvHash64(s.gen.next(r)) % s.itemcount
	if v < 0 { // only for fnvhash64 == MinInt64; Java would go negative
		v += s.itemcount
	}
	return s.min + v
}

// exactZipf samples rank k in 1..n with probability k^-s / H(n,s) by
// inverse CDF over a precomputed cumulative table.
type exactZipf struct {
	cdf []float64 // cdf[i] = P(rank <= i+1); cdf[n-1] == 1
}

func newExactZipf(n int64, s float64) *exactZipf {
	cdf := make([]float64, n)
	sum := 0.0
	for i := range cdf {
		sum += math.Pow(float64(i+1), -s)
		cdf[i] = sum
	}
	for i := range cdf {
		cdf[i] /= sum
	}
	cdf[n-1] = 1
	return &exactZipf{cdf: cdf}
}

// rank returns a rank in 1..n.
func (z *exactZipf) rank(r *rand.Rand) int64 {
	u := r.Float64()
	lo, hi := 0, len(z.cdf)-1 // smallest i with cdf[i] > u; cdf[hi] == 1 > u
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if z.cdf[mid] > u {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return int64(lo) + 1
}

// hotspot is YCSB's HotspotIntegerGenerator over [lower, upper]: with
// probability hotOpnFraction a uniform item from the first
// int(interval*hotsetFraction) items, otherwise a uniform item from the rest.
type hotspot struct {
	lower          int64
	hotInterval    int64
	coldInterval   int64
	hotOpnFraction float64
}

func newHotspot(lower, upper int64, hotsetFraction, hotOpnFraction float64) *hotspot {
	interval := upper - lower + 1
	hot := int64(float64(interval) * hotsetFraction)
	return &hotspot{lower: lower, hotInterval: hot, coldInterval: interval - hot, hotOpnFraction: hotOpnFraction}
}

func (h *hotspot) next(r *rand.Rand) int64 {
	// YCSB would divide by zero on an empty set; fall back to the other set.
	if (r.Float64() < h.hotOpnFraction && h.hotInterval > 0) || h.coldInterval == 0 {
		return h.lower + r.Int64N(h.hotInterval)
	}
	return h.lower + h.hotInterval + r.Int64N(h.coldInterval)
}
