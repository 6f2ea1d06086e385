package plot

import (
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
)

// niceTicks labels a linear axis at 3 to 7 round values (steps of 1, 2, 2.5
// or 5 times a power of ten) with an unlabeled minor tick between each pair.
// gonum's DefaultTicks picks steps such as 50-150-250 that are harder to read.
type niceTicks struct{}

func (niceTicks) Ticks(min, max float64) []gplot.Tick {
	if !(max > min) || math.IsInf(min, 0) || math.IsInf(max, 0) {
		return gplot.DefaultTicks{}.Ticks(min, max)
	}
	raw := (max - min) / 6
	mag := math.Pow10(int(math.Floor(math.Log10(raw))))
	step, decimals := 10*mag, 0
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw*(1-1e-9) {
			step = m * mag
			if m == 2.5 {
				decimals = 1
			}
			break
		}
	}
	decimals += max0(-int(math.Floor(math.Log10(step) + 1e-9)))
	if m := step / math.Pow10(int(math.Floor(math.Log10(step)+1e-9))); math.Abs(m-2.5) < 1e-9 && step >= 10 {
		decimals = 0 // 25, 250, ...: no fraction
	}
	var ticks []gplot.Tick
	first := math.Ceil(min/step - 1e-9)
	for i := 0; ; i++ {
		v := (first + float64(i)) * step
		if v > max+step*1e-9 {
			break
		}
		if i > 10_000 {
			break // cannot happen with step >= span/7; a bound on the loop regardless
		}
		label := strconv.FormatFloat(v, 'f', decimals, 64)
		if v == 0 || label == "-"+strconv.FormatFloat(0, 'f', decimals, 64) {
			label = strconv.FormatFloat(0, 'f', decimals, 64)
		}
		ticks = append(ticks, gplot.Tick{Value: v, Label: label})
		if half := v + step/2; half <= max {
			ticks = append(ticks, gplot.Tick{Value: half})
		}
	}
	if half := first*step - step/2; half >= min {
		ticks = append([]gplot.Tick{{Value: half}}, ticks...)
	}
	return ticks
}

func max0(x int) int {
	if x < 0 {
		return 0
	}
	return x
}

// floor125 and ceil125 round x > 0 down or up to 1, 2 or 5 times a power of
// ten, so that a log axis starts and ends at a round value without wasting
// most of a decade.
func floor125(x float64) float64 {
	p := math.Pow10(int(math.Floor(math.Log10(x))))
	for _, m := range []float64{5, 2, 1} {
		if m*p <= x*(1+1e-9) {
			return m * p
		}
	}
	return p
}

func ceil125(x float64) float64 {
	p := math.Pow10(int(math.Floor(math.Log10(x))))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}
