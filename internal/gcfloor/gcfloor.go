// Package gcfloor keeps the Go heap's collection goal above a floor.
//
// Go starts a collection when the heap grows GOGC percent above what the
// last one left live. A server whose live heap is small but whose
// allocation rate is high (tens of MB live, hundreds of MB/s allocated
// serving requests) then collects many times a second, and every cycle
// stops the world twice. On a loaded machine a stop can last milliseconds
// (the thread that must acknowledge it waits for a CPU): that is the p99
// of a fast request. A floor on the goal, as a heap ballast gave before Go
// had a memory limit, trades that much memory for fewer cycles; above the
// floor the usual GOGC rule holds (the approach of Uber's GC tuner).
package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// Keep sets GOGC to percent and, after every collection, raises it so that
// the next collection starts no sooner than at floor bytes of heap: GOGC
// becomes Percent(percent, live, floor) for the live heap just measured.
// It runs for the life of the process; call it once.
func Keep(percent int, floor uint64) {
	debug.SetGCPercent(percent)
	samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	onEachGC(func() {
		metrics.Read(samples)
		if samples[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		debug.SetGCPercent(Percent(percent, samples[0].Value.Uint64(), floor))
	})
}

// Percent is the GOGC that puts the heap goal, live*(1+GOGC/100), at floor
// bytes, and never below percent.
func Percent(percent int, live, floor uint64) int {
	if live == 0 || live >= floor {
		return percent
	}
	p := (floor - live) * 100 / live
	if p > 1<<30 {
		p = 1 << 30
	}
	return max(percent, int(p))
}

// sentinel is an object nothing refers to: its finalizer runs after the
// collection that found it unreachable.
type sentinel struct{ _ *byte }

// onEachGC calls f, on the finalizer goroutine, after each collection
// from now on.
func onEachGC(f func()) {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		f()
		onEachGC(f)
	})
}
