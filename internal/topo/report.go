package topo

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Constants of the speed-of-light floor.
const (
	EarthRadiusKm  = 6371.0
	FibreKmPerSec  = 200000.0   // light in optical fibre, about 2/3 c
	VacuumKmPerSec = 299792.458 // c: no link between two regions is faster
	degreesToRadii = math.Pi / 180
)

// RTTMatrix returns the mean round-trip time between every pair of regions
// (mean one-way delay there plus mean one-way delay back); the diagonal is the
// intra-region RTT. w must be validated.
func (w *World) RTTMatrix() [][]time.Duration {
	n := len(w.Regions)
	m := make([][]time.Duration, n)
	for a := range m {
		m[a] = make([]time.Duration, n)
		for b := range m[a] {
			m[a][b] = w.MeanDelay(a, b) + w.MeanDelay(b, a)
		}
	}
	return m
}

// BaseRTT is the minimum round-trip time between regions a and b (base delay
// there plus base delay back). w must be validated.
func (w *World) BaseRTT(a, b int) time.Duration {
	return w.BaseDelay(a, b) + w.BaseDelay(b, a)
}

// DistanceKm is the great-circle (haversine) distance between regions a and b
// on a sphere of radius EarthRadiusKm.
func (w *World) DistanceKm(a, b int) float64 { return distanceKm(w.Regions[a], w.Regions[b]) }

func distanceKm(ra, rb Region) float64 {
	lat1, lat2 := ra.Lat*degreesToRadii, rb.Lat*degreesToRadii
	dLat := lat2 - lat1
	dLong := (rb.Long - ra.Long) * degreesToRadii
	h := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1)*math.Cos(lat2)*math.Sin(dLong/2)*math.Sin(dLong/2)
	h = math.Min(1, math.Max(0, h))
	return 2 * EarthRadiusKm * math.Asin(math.Sqrt(h))
}

// LightRTT is the speed-of-light floor on the round-trip time between regions
// a and b: twice the great-circle distance at FibreKmPerSec. No real network
// beats it; a base RTT below it means the coordinates or delays are wrong (or
// nominal, as for emulated worlds).
func (w *World) LightRTT(a, b int) time.Duration {
	sec := 2 * w.DistanceKm(a, b) / FibreKmPerSec
	return time.Duration(sec * float64(time.Second))
}

// LightOneWay is half LightRTT, the speed-of-light floor on a message
// from region a to region b; 0 within a region. Floors computed on it
// (protocol.Keyspace.Floor) are what a perfect network would allow.
func (w *World) LightOneWay(a, b int) time.Duration {
	if a == b {
		return 0
	}
	return w.LightRTT(a, b) / 2
}

// EmulatedOneWay is the delay WAN emulation on one machine holds a
// message from region a to region b for: BaseDelay between regions, 0
// within one (on loopback a client's hop to its node and a node's
// messages to its region's are not delayed).
func (w *World) EmulatedOneWay(a, b int) time.Duration {
	if a == b {
		return 0
	}
	return w.BaseDelay(a, b)
}

// NodeCount is the total number of nodes in the world.
func (w *World) NodeCount() int { return len(w.Regions) * w.NodesPerRegion }

// WriteMatrix prints a readable description of a world: a header (name,
// description, regions, node count, source), the mean RTT matrix in
// milliseconds and the speed-of-light RTT floor matrix, with a warning for
// any pair whose base RTT is below that floor.
func WriteMatrix(out io.Writer, w *World) error {
	if w.delay == nil {
		if err := w.Validate(); err != nil {
			return err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s", w.Name)
	if w.Description != "" {
		fmt.Fprintf(&b, ": %s", w.Description)
	}
	b.WriteByte('\n')
	names := make([]string, len(w.Regions))
	for i, r := range w.Regions {
		names[i] = r.Name
	}
	fmt.Fprintf(&b, "  %d regions (%s), %d node%s each, %d nodes in all\n",
		len(w.Regions), strings.Join(names, ", "), w.NodesPerRegion, plural(w.NodesPerRegion), w.NodeCount())
	if w.Source != "" {
		fmt.Fprintf(&b, "  source: %s\n", oneLine(w.Source))
	}

	rtt := w.RTTMatrix()
	b.WriteByte('\n')
	writeTable(&b, "mean RTT (ms)", names, func(i, j int) float64 { return ms(rtt[i][j]) })
	b.WriteByte('\n')
	writeTable(&b, "light RTT floor (ms)", names, func(i, j int) float64 { return ms(w.LightRTT(i, j)) })
	b.WriteString("  (great-circle distance at 200,000 km/s in fibre, there and back)\n")
	for _, warn := range w.Warnings() {
		fmt.Fprintf(&b, "  warning: %s\n", warn)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// WriteList prints every built-in world (name, regions, nodes, description)
// followed by its matrices; `lightcone worlds` prints this.
func WriteList(out io.Writer) error {
	names := PresetNames()
	if _, err := fmt.Fprintf(out, "%d built-in worlds: %s\n", len(names), strings.Join(names, ", ")); err != nil {
		return err
	}
	for _, n := range names {
		w, err := Preset(n)
		if err != nil {
			return err
		}
		if _, err := io.WriteString(out, "\n"); err != nil {
			return err
		}
		if err := WriteMatrix(out, w); err != nil {
			return err
		}
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// writeTable writes an aligned square matrix with a title in the corner.
func writeTable(b *strings.Builder, title string, names []string, cell func(i, j int) float64) {
	first := len(title)
	for _, n := range names {
		first = max(first, len(n))
	}
	cells := make([][]string, len(names))
	width := 0
	for i := range names {
		cells[i] = make([]string, len(names))
		for j := range names {
			cells[i][j] = fmt.Sprintf("%.1f", cell(i, j))
			width = max(width, len(cells[i][j]))
		}
	}
	col := make([]int, len(names))
	for j, n := range names {
		col[j] = max(width, len(n))
	}
	fmt.Fprintf(b, "  %-*s", first, title)
	for j, n := range names {
		fmt.Fprintf(b, "  %*s", col[j], n)
	}
	b.WriteByte('\n')
	for i, n := range names {
		fmt.Fprintf(b, "  %-*s", first, n)
		for j := range names {
			fmt.Fprintf(b, "  %*s", col[j], cells[i][j])
		}
		b.WriteByte('\n')
	}
}
