package topo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// StorageService models one region's storage service (internal/storagesvc):
// how long it takes to answer a request once the request has reached it,
// apart from the network, for reads (get, head, list) and writes (put,
// put_meta, delete) separately — cloud stores' write tails are longer
// (seed 001 §1.2: at the median client the p99 exceeds the median by 70 ms
// for GETs and 200 ms for PUTs).
type StorageService struct {
	Region string         `yaml:"region"`
	Read   ServiceLatency `yaml:"read"`
	Write  ServiceLatency `yaml:"write"`
	Source string         `yaml:"source"` // where the numbers come from
}

// ServiceLatency is a service-time distribution given by its median and
// 99th percentile, in milliseconds: log-normal through both (the usual fit
// for storage latency, heavy-tailed), or the constant median when P99Ms is
// 0 or equal to it. The zero value answers at once.
type ServiceLatency struct {
	MedianMs float64 `yaml:"median_ms"`
	P99Ms    float64 `yaml:"p99_ms"`
}

// z99 is the standard normal's 99th percentile.
const z99 = 2.3263478740408408

// Sample draws one service time. Draws are capped at an hour (maxDelayMs).
func (l ServiceLatency) Sample(r *rand.Rand) time.Duration {
	ms := l.MedianMs
	if l.P99Ms > l.MedianMs && l.MedianMs > 0 {
		sigma := math.Log(l.P99Ms/l.MedianMs) / z99
		ms = min(l.MedianMs*math.Exp(sigma*r.NormFloat64()), maxDelayMs)
	}
	return msToDuration(ms)
}

func (l ServiceLatency) check(f string) error {
	if err := checkMs(l.MedianMs, f+".median_ms"); err != nil {
		return err
	}
	if err := checkMs(l.P99Ms, f+".p99_ms"); err != nil {
		return err
	}
	if l.P99Ms != 0 && l.P99Ms < l.MedianMs {
		return fmt.Errorf("%s.p99_ms: %v is below median_ms %v", f, l.P99Ms, l.MedianMs)
	}
	if l.P99Ms > 0 && l.MedianMs == 0 {
		return fmt.Errorf("%s.median_ms: 0 with p99_ms %v (a log-normal needs a positive median)", f, l.P99Ms)
	}
	return nil
}

// Storage returns region's storage service model (the zero model, which
// answers at once, if the world gives none).
func (w *World) Storage(region int) StorageService {
	if region < len(w.storage) {
		return w.storage[region]
	}
	return StorageService{}
}

// validateStorage checks StorageServices and indexes them by region.
func (w *World) validateStorage(index map[string]int) error {
	w.storage = make([]StorageService, len(w.Regions))
	seen := make([]bool, len(w.Regions))
	for i, s := range w.StorageServices {
		f := fmt.Sprintf("storage_services[%d]", i)
		r, ok := index[s.Region]
		if !ok {
			return fmt.Errorf("%s.region: unknown region %q", f, s.Region)
		}
		if seen[r] {
			return fmt.Errorf("%s.region: %q has two storage services", f, s.Region)
		}
		seen[r] = true
		if err := s.Read.check(f + ".read"); err != nil {
			return err
		}
		if err := s.Write.check(f + ".write"); err != nil {
			return err
		}
		w.storage[r] = s
	}
	return nil
}
