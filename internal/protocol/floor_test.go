package protocol_test

import (
	"fmt"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/protocol"
	_ "github.com/lightcone/lightcone/internal/protocol/all"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/topo"
)

// TestFloorsAreLowerBounds: the floor the simulator reports beside each
// row (a protocol's Floor plus the client's hop to its gateway) is at most
// the fastest operation the row measured, for every registered protocol in
// each of its demo configurations, on worlds with one and with two nodes
// per region (where a key's nearest replica may be the gateway itself), with
// no faults and perfect clocks. A floor above a measured latency is not a
// floor (the issue: a local-read floor of 1.0 ms above a measured p50 of
// 0.7 ms with two nodes per region).
func TestFloorsAreLowerBounds(t *testing.T) {
	worlds := []struct {
		preset  string
		perNode int
	}{{"meteor3", 1}, {"meteor3", 2}, {"globlease4", 2}}
	for _, d := range protocol.All() {
		for _, p := range d.Demo {
			for _, wc := range worlds {
				name := fmt.Sprintf("%s/%s/%s-%d", d.Name, p.Label, wc.preset, wc.perNode)
				t.Run(name, func(t *testing.T) {
					w, err := topo.Preset(wc.preset)
					if err != nil {
						t.Fatal(err)
					}
					w.NodesPerRegion = wc.perNode
					if err := w.Validate(); err != nil {
						t.Fatal(err)
					}
					var settings yaml.Node
					if err := yaml.Unmarshal([]byte(p.Settings), &settings); err != nil {
						t.Fatal(err)
					}
					if len(settings.Content) > 0 {
						settings = *settings.Content[0]
					}
					c := scenario.Config{
						Seed: 1, WorldDef: w, Protocol: d.Name, SettingsYAML: settings,
						WorkloadPreset: "a", Clients: 12, Rate: 300, Duration: 3 * time.Second,
						Check: "none",
					}
					res, err := scenario.Run(c)
					if err != nil {
						t.Fatal(err)
					}
					checked := 0
					for _, row := range res.Rows {
						h := res.Histograms[row.Region+"/"+row.Op]
						if h == nil || h.TotalCount() == 0 {
							continue
						}
						checked++
						// Latencies are recorded in µs with 3 significant
						// digits: allow that rounding.
						minUs := float64(h.Min())
						if floorUs := row.Floor * 1e3; minUs < floorUs*(1-1e-3)-1 {
							t.Errorf("%s %s: fastest of %d operations took %.3f ms, below the reported floor %.3f ms (p50 %.3f ms)\nreplay: go test ./internal/protocol -run 'TestFloorsAreLowerBounds/%s' -v",
								row.Region, row.Op, h.TotalCount(), minUs/1e3, row.Floor, row.P50, name)
						}
					}
					if checked == 0 {
						t.Fatal("no operation completed: nothing to compare the floors with")
					}
				})
			}
		}
	}
}
