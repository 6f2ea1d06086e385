package topo

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStorageServices(t *testing.T) {
	w, err := Parse([]byte(`
name: s
nodes_per_region: 1
regions: [{name: a}, {name: b}]
links: [{from: a, to: b, one_way_ms: 10}]
storage_services:
  - {region: b, read: {median_ms: 10, p99_ms: 100}, write: {median_ms: 20}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if s := w.Storage(0); s != (StorageService{}) {
		t.Errorf("Storage(a) = %+v; want the zero model", s)
	}
	if d := w.Storage(1).Write.Sample(rand.New(rand.NewPCG(1, 1))); d != 20*time.Millisecond {
		t.Errorf("constant write latency sampled %v; want 20ms", d)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var ds []time.Duration
	for range 20000 {
		ds = append(ds, w.Storage(1).Read.Sample(r))
	}
	slices.Sort(ds)
	med, p99 := ds[len(ds)/2], ds[len(ds)*99/100]
	if med < 9500*time.Microsecond || med > 10500*time.Microsecond || p99 < 90*time.Millisecond || p99 > 110*time.Millisecond {
		t.Errorf("log-normal(10, 100) sampled median %v, p99 %v; want about 10ms and 100ms", med, p99)
	}
	for _, bad := range []string{
		"storage_services: [{region: c}]",
		"storage_services: [{region: a}, {region: a}]",
		"storage_services: [{region: a, read: {median_ms: 10, p99_ms: 5}}]",
		"storage_services: [{region: a, write: {median_ms: -1}}]",
		"storage_services: [{region: a, write: {medianms: 1}}]",
	} {
		_, err := Parse([]byte("name: s\nnodes_per_region: 1\nregions: [{name: a}]\n" + bad + "\n"))
		if err == nil || !strings.Contains(err.Error(), "storage_services") {
			t.Errorf("Parse(%s) = %v; want an error naming storage_services", bad, err)
		}
	}
}
