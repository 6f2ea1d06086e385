package workload

import (
	"math"
	"math/rand/v2"
	"time"
)

// PoissonGap returns an exponentially distributed inter-arrival gap with
// mean 1/ratePerSec seconds, so arrivals form a Poisson process (open loop).
// A non-positive or NaN rate means "never": it returns the largest Duration.
func PoissonGap(r *rand.Rand, ratePerSec float64) time.Duration {
	if !(ratePerSec > 0) {
		return math.MaxInt64
	}
	ns := r.ExpFloat64() / ratePerSec * float64(time.Second)
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// Arrivals generates open-loop arrival times of a Poisson process, as
// offsets from the start of the run.
type Arrivals struct {
	RatePerSec float64
	at         time.Duration
}

// NewArrivals returns a Poisson arrival process with the given rate.
func NewArrivals(ratePerSec float64) *Arrivals { return &Arrivals{RatePerSec: ratePerSec} }

// Next returns the offset of the next arrival (the previous one plus a
// PoissonGap), saturating at the largest Duration.
func (a *Arrivals) Next(r *rand.Rand) time.Duration {
	gap := PoissonGap(r, a.RatePerSec)
	if gap > math.MaxInt64-a.at {
		a.at = math.MaxInt64
	} else {
		a.at += gap
	}
	return a.at
}
