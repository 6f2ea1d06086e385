// Package plot turns benchmark results into PNG figures for lightcone bench
// reports.
//
// Every function takes plain data (a Meta, some Series) and writes one PNG
// file; nothing is read from the environment and nothing time-dependent is
// drawn, so the same input always yields byte-identical files. That is what
// lets CI compare report artefacts across runs of the same seed.
//
// Each figure has a title on top and a caption under the axes. The caller
// writes the caption and, per STYLE.md, it must name the experiment, world,
// workload and seed that produced the figure; this package only wraps it to
// the image width.
//
// Series are told apart by color and by dash pattern (and, in Lines, by
// glyph shape) taken from a fixed palette, so figures stay readable when
// printed in grayscale. The legend goes into the first place in the data area
// that no data crosses (corners first, then edge middles, then the center),
// and to the right of the axes when there is none.
//
// Input policy: NaN and ±Inf values are rejected with an error rather than
// skipped, because a non-finite latency or throughput in a benchmark result
// is a bug upstream, and silently dropping points would draw a figure that
// looks right but is not. All input errors wrap ErrInvalid.
package plot
