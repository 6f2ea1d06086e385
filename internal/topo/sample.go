package topo

import (
	"math"
	"math/rand/v2"
	"time"
)

// Jitter distribution names accepted in Jitter.Dist. The empty string means
// DistNone.
const (
	DistNone        = "none"
	DistExponential = "exponential"
	DistUniform     = "uniform"
	DistNormal      = "normal" // half-normal: |N(0, σ)| with mean MeanMs
)

// Dists lists the valid Jitter.Dist values (besides "", which means none).
var Dists = []string{DistNone, DistExponential, DistUniform, DistNormal}

// halfNormalSigma converts the mean of a half-normal distribution to the σ of
// the underlying normal: E|N(0,σ)| = σ·sqrt(2/π).
var halfNormalSigma = math.Sqrt(math.Pi / 2)

// Sample draws one one-way delay: the base OneWayMs plus a non-negative
// jitter drawn from l.Jitter, so the result is never below the base. It does
// not allocate. An unknown distribution (only possible on a link that has not
// been validated) adds no jitter.
func (l Link) Sample(r *rand.Rand) time.Duration {
	return msToDuration(l.OneWayMs + l.Jitter.sample(r))
}

// sample draws the jitter in milliseconds.
func (j Jitter) sample(r *rand.Rand) float64 {
	if j.MeanMs <= 0 {
		return 0
	}
	switch j.Dist {
	case DistExponential:
		return r.ExpFloat64() * j.MeanMs
	case DistUniform:
		return r.Float64() * 2 * j.MeanMs
	case DistNormal:
		return math.Abs(r.NormFloat64()) * j.MeanMs * halfNormalSigma
	default: // none, ""
		return 0
	}
}
