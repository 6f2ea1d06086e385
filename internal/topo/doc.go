// A World is the geography a Lightcone run happens in: a list of regions
// (datacenters, each with a provider and coordinates), how many nodes each
// region runs, and a latency model for every ordered pair of regions and for
// traffic inside a region. A Topology lays the nodes out and is what
// protocols read.
//
// # Latency model
//
// Each Link gives a one-way delay as a base (OneWayMs) plus a random,
// non-negative jitter (Jitter). The base is therefore the floor: no message
// on that link is ever faster. Jitter distributions, each with mean MeanMs:
//
//	none         no jitter (also the empty string); mean_ms must be 0
//	exponential  Exp with mean mean_ms
//	uniform      U[0, 2*mean_ms]
//	normal       half-normal |N(0, σ)|, σ = mean_ms*sqrt(π/2)
//
// Link.Sample draws one delay without allocating; World.Delay samples the
// link between two regions, World.BaseDelay and World.MeanDelay give its
// floor and mean. A link given once is used in both directions unless the
// reverse direction is also listed; intra is used between nodes of one
// region (default 0.25 ms with exponential jitter of mean 0.05 ms when
// omitted). World.LightRTT is the speed-of-light floor (great-circle distance
// at 200,000 km/s, there and back), useful to sanity-check a world.
//
// Validate enforces physics on every link between two regions: a base
// delay below the great-circle distance at c (299,792 km/s, vacuum) is
// impossible and an error naming the link, the distance and the minimum; one
// below the distance at fibre speed (200,000 km/s) but not below c is
// accepted (straight microwave links come close to c) with a warning
// (World.Warnings), which `lightcone worlds` and `lightcone sim` print.
// Regions without coordinates (lat 0, long 0 for all: nominal worlds) are
// at distance 0 and never trip the check.
//
// # YAML format
//
// Worlds are written in YAML; unknown fields are errors and every problem is
// reported as one line naming the field, e.g.
// `world "x": links[3].jitter.dist: unknown distribution "gauss" (valid:
// none, exponential, uniform, normal)`.
//
//	name: tiny                      # required
//	description: two regions 40 ms apart
//	source: where the numbers come from
//	nodes_per_region: 3             # at least 1
//	regions:                        # at least one; names unique
//	  - {name: east, provider: aws, lat: 39.04, long: -77.49}
//	  - {name: west, provider: aws, lat: 37.35, long: -121.96}
//	intra:                          # optional
//	  one_way_ms: 0.25
//	  jitter: {dist: exponential, mean_ms: 0.05}
//	links:                          # every pair of distinct regions
//	  - from: east
//	    to: west
//	    one_way_ms: 40              # base one-way delay, ms
//	    jitter: {dist: exponential, mean_ms: 1}
//	    source: measured, 2024
//	storage_services:               # optional: regions' storage services
//	  - region: east                # (internal/storagesvc) service time,
//	    read: {median_ms: 8, p99_ms: 80}    # log-normal through median
//	    write: {median_ms: 15, p99_ms: 200} # and p99; reads: get, head,
//	    source: where from          # list; writes: put, put_meta, delete
//
// Parse and Load read such a document and Validate it. Built-in worlds are
// embedded (presets/*.yaml): PresetNames lists them, Preset returns one,
// Resolve takes a preset name or a file path. WriteMatrix and WriteList print
// worlds as RTT tables.
package topo
