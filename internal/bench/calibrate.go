package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"time"

	"github.com/lightcone/lightcone/internal/bench/plot"
	"github.com/lightcone/lightcone/internal/localcluster"
	"github.com/lightcone/lightcone/internal/server"
	"github.com/lightcone/lightcone/internal/topo"
)

// PairRTT compares a region pair's configured round trip with the one the
// real runtime's WAN emulation produced.
type PairRTT struct {
	From, To     string
	ConfiguredMs float64 // mean: base delays plus mean jitter, both ways
	BaseMs       float64 // the floor: base delays both ways
	Count        int64
	MeanMs       float64
	MinMs        float64
	MaxMs        float64
	StdMs        float64
	OK           bool // mean within CalibrationTolerance of configured
}

// CalibrationTolerance: a measured mean RTT passes within 10% + 3 ms of the
// configured one (the 3 ms absorb loopback and scheduling on a busy host).
func calibrationOK(measured, configured float64) bool {
	return math.Abs(measured-configured) <= 0.10*configured+3
}

// calibrate starts the world's cluster with frequent link pings, lets it
// run, and reads every node's measured RTTs from /status (seed 002 §5.1.1,
// Table 5.1: the delays an emulation produces, checked with pings).
func calibrate(ctx context.Context, e *Experiment, opts Options, rep *Report, progress func(string, ...any)) error {
	c, err := e.configFor(e.Series[0], 0, opts)
	if err != nil {
		return err
	}
	w, err := c.ResolveWorld()
	if err != nil {
		return err
	}
	world := *w
	world.NodesPerRegion = 1
	dur := e.Real.Duration
	if _, set := opts.Overrides["duration"]; set {
		dur = c.Duration
	}
	progress("real: starting a %d-region cluster (%s) to measure its links for %s", len(world.Regions), world.Name, dur)
	cl, err := localcluster.Start(ctx, localcluster.Options{World: &world, Binary: opts.Binary, ServerArgs: []string{"--ping-interval", "100ms"}})
	if err != nil {
		return fmt.Errorf("bench: calibration: %w", err)
	}
	defer cl.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(dur):
	}
	tp := topo.NewTopology(&world)
	measured := map[[2]string]server.PeerRTT{}
	for _, n := range cl.Nodes() {
		var st struct {
			PeerRTT map[string]server.PeerRTT `json:"peer_rtt"`
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.HTTP+"/status", nil)
		if err != nil {
			return err
		}
		res, err := statusClient.Do(req)
		if err != nil {
			return fmt.Errorf("bench: calibration: %s /status: %w", n.Name, err)
		}
		err = json.NewDecoder(res.Body).Decode(&st)
		res.Body.Close()
		if err != nil {
			return fmt.Errorf("bench: calibration: %s /status: %w", n.Name, err)
		}
		for peer, r := range st.PeerRTT {
			measured[[2]string{tp.World.Regions[n.Region].Name, regionOfNode(tp, peer)}] = r
		}
	}
	for a := range world.Regions {
		for b := a + 1; b < len(world.Regions); b++ {
			ra, rb := world.Regions[a].Name, world.Regions[b].Name
			m1, m2 := measured[[2]string{ra, rb}], measured[[2]string{rb, ra}]
			n := m1.Count + m2.Count
			if n == 0 {
				continue
			}
			p := PairRTT{From: ra, To: rb, Count: n,
				ConfiguredMs: float64(world.MeanDelay(a, b)+world.MeanDelay(b, a)) / 1e6,
				BaseMs:       float64(world.BaseDelay(a, b)+world.BaseDelay(b, a)) / 1e6,
				MeanMs:       (m1.MeanMs*float64(m1.Count) + m2.MeanMs*float64(m2.Count)) / float64(n),
				MinMs:        math.Min(nz(m1.MinMs, m2.MinMs), nz(m2.MinMs, m1.MinMs)),
				MaxMs:        math.Max(m1.MaxMs, m2.MaxMs),
			}
			p.StdMs = pooledStd(m1, m2, p.MeanMs)
			p.OK = calibrationOK(p.MeanMs, p.ConfiguredMs)
			rep.Calibration = append(rep.Calibration, p)
		}
	}
	return nil
}

func nz(v, alt float64) float64 {
	if v == 0 {
		return alt
	}
	return v
}

func regionOfNode(tp *topo.Topology, name string) string {
	for _, n := range tp.Nodes {
		if n.Name == name {
			return tp.World.Regions[n.Region].Name
		}
	}
	return name
}

func (rep *Report) writeCalibrationFigure(dir string) (string, error) {
	if len(rep.Calibration) == 0 {
		return "", nil
	}
	var cats []string
	conf := plot.Series{Label: "configured mean RTT"}
	meas := plot.Series{Label: "measured mean RTT"}
	for _, p := range rep.Calibration {
		cats = append(cats, p.From+"–"+p.To)
		conf.Y = append(conf.Y, p.ConfiguredMs)
		meas.Y = append(meas.Y, p.MeanMs)
	}
	name := "calibration.png"
	err := plot.Bars(filepath.Join(dir, name), plot.Meta{Title: "WAN emulation: configured vs measured round trips",
		Caption: rep.caption(""), YLabel: "RTT (ms)"}, cats, []plot.Series{conf, meas})
	return name, err
}

var statusClient = &http.Client{Timeout: 10 * time.Second}

// pooledStd combines two directions' samples (count, mean, std dev) into
// the standard deviation of all of them around mean.
func pooledStd(a, b server.PeerRTT, mean float64) float64 {
	n := float64(a.Count + b.Count)
	if n < 2 {
		return 0
	}
	ss := 0.0
	for _, d := range []server.PeerRTT{a, b} {
		if d.Count == 0 {
			continue
		}
		c := float64(d.Count)
		ss += (c-1)*d.StdMs*d.StdMs + c*(d.MeanMs-mean)*(d.MeanMs-mean)
	}
	return math.Sqrt(ss / (n - 1))
}
