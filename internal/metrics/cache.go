package metrics

import (
	"maps"
	"sync"
	"sync/atomic"
)

// cowMap is a copy-on-write map from label values to resolved series.
// Lookups, the hot path, read an immutable map through an atomic pointer:
// no lock, no allocation. Inserts, which happen once per label combination,
// copy the map under a mutex. The map holds at most max keys besides
// overflow keys; later keys are recorded under the overflow key.
type cowMap[K comparable, V any] struct {
	m   atomic.Pointer[map[K]V]
	mu  sync.Mutex // serializes inserts
	max int
}

// load returns the value cached for k, if any.
func (c *cowMap[K, V]) load(k K) (V, bool) {
	if m := c.m.Load(); m != nil {
		v, ok := (*m)[k]
		return v, ok
	}
	var zero V
	return zero, false
}

// loadOrBuild returns the value cached for k, building and caching it if
// there is none. If the map is full, it returns the value for over instead,
// building that if needed: over keys may exceed the limit, so callers must
// draw them from a small fixed set.
func (c *cowMap[K, V]) loadOrBuild(k, over K, build func(K) V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if v, ok := (*old)[k]; ok {
			return v
		}
		if len(*old) >= c.max {
			if v, ok := (*old)[over]; ok {
				return v
			}
			k = over
		}
	}
	v := build(k)
	next := map[K]V{}
	if old != nil {
		next = maps.Clone(*old)
	}
	next[k] = v
	c.m.Store(&next)
	return v
}
