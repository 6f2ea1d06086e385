package metrics

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// TestKeyspaceStatsExported: what the stats function returns is exported
// per keyspace at every scrape, with the node's identity, as a counter or
// a gauge; an error exports nothing and breaks nothing else.
func TestKeyspaceStatsExported(t *testing.T) {
	m := New(testLabels)
	var renewals atomic.Int64
	var fail atomic.Bool
	m.AddKeyspaceStats(func() (map[string][]Stat, error) {
		if fail.Load() {
			return nil, errors.New("node stopped")
		}
		return map[string][]Stat{
			"glob": {{Name: "lease_renewals_total", Help: "Renewals.", Value: float64(renewals.Load())},
				{Name: "lease_leases_held", Help: "Leases held.", Gauge: true, Value: 2}},
			"other": {{Name: "lease_renewals_total", Help: "Renewals.", Value: 7}},
		}, nil
	})
	renewals.Store(3)
	m.Request("get", "ONE", 0, CodeOK)
	body := scrape(t, m)
	for _, want := range []string{
		`lightcone_lease_renewals_total{keyspace="glob",node="n1",region="eu"} 3`,
		`lightcone_lease_renewals_total{keyspace="other",node="n1",region="eu"} 7`,
		`lightcone_lease_leases_held{keyspace="glob",node="n1",region="eu"} 2`,
		"# TYPE lightcone_lease_renewals_total counter",
		"# TYPE lightcone_lease_leases_held gauge",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q:\n%s", want, body)
		}
	}
	renewals.Store(5)
	if body := scrape(t, m); !strings.Contains(body, `lightcone_lease_renewals_total{keyspace="glob",node="n1",region="eu"} 5`) {
		t.Errorf("second scrape does not show the new count 5:\n%s", body)
	}
	fail.Store(true)
	body = scrape(t, m)
	if strings.Contains(body, "lightcone_lease_") {
		t.Errorf("a failed read still exported lease series:\n%s", body)
	}
	if !strings.Contains(body, "lightcone_requests_total") {
		t.Errorf("a failed read hid the other series:\n%s", body)
	}
	var nilM *Metrics
	nilM.AddKeyspaceStats(func() (map[string][]Stat, error) { return nil, nil }) // no panic
}
