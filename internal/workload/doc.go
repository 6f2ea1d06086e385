// Package workload generates YCSB core workloads (A–F), and a
// transactional workload (see Transactions), for Lightcone's deterministic
// simulator.
//
// It models the transaction phase of YCSB's CoreWorkload
// (site.ycsb.workloads.CoreWorkload): an operation chooser that picks read,
// update, insert, scan or read-modify-write by proportion, a key chooser
// that picks which record an operation touches, and YCSB's key naming. The
// code is a Go re-implementation of YCSB's generators (ZipfianGenerator,
// ScrambledZipfianGenerator, SkewedLatestGenerator, HotspotIntegerGenerator,
// UniformLongGenerator, DiscreteGenerator, AcknowledgedCounterGenerator).
// Field values (the 10 × 100-byte fields) are not generated; only their
// total size, ValueSize, is carried.
//
// Everything is deterministic: all randomness comes from the *rand.Rand
// given to Generator.Next (or PoissonGap); there is no global state, clock,
// goroutine or map iteration. The same Spec and seed yield the same
// sequence. A Generator is not safe for concurrent use.
//
// # Parameters
//
// Spec field (yaml), YCSB property, default:
//
//	RecordCount (record_count)                  recordcount                1000
//	OperationCount (operation_count)            operationcount             1000
//	ReadProportion (read_proportion)            readproportion             0.95 *
//	UpdateProportion (update_proportion)        updateproportion           0.05 *
//	InsertProportion (insert_proportion)        insertproportion           0
//	ScanProportion (scan_proportion)            scanproportion             0
//	ReadModifyWriteProportion (read_modify_write_proportion)
//	                                            readmodifywriteproportion  0
//	RequestDistribution (request_distribution)  requestdistribution        uniform
//	ZipfianConstant (zipfian_constant)          ZipfianGenerator.ZIPFIAN_CONSTANT 0.99
//	ZipfExponent (zipf_exponent)                (none; Lightcone extension) 0 = off
//	HotspotDataFraction (hotspot_data_fraction) hotspotdatafraction        0.2
//	HotspotOpnFraction (hotspot_opn_fraction)   hotspotopnfraction         0.8
//	MinScanLength (min_scan_length)             minscanlength              1
//	MaxScanLength (max_scan_length)             maxscanlength              1000
//	ScanLengthDistribution (scan_length_distribution)
//	                                            scanlengthdistribution     uniform
//	ValueSize (value_size)                      fieldcount × fieldlength   10 × 100 = 1000
//	InsertOrder (insert_order)                  insertorder                hashed
//
// (*) only when all five proportions are zero. EnsureDefaults fills zero
// fields with these defaults; Validate checks ranges (proportions in [0, 1]
// summing to 1 ± 1e-9, record_count ≥ 1, zipfian_constant in (0, 1), ...).
//
// Presets (Preset "a".."f" or "workloada".."workloadf") carry YCSB's
// workloads/workloada..workloadf: A 50/50 read/update zipfian; B 95/5
// read/update zipfian; C 100% read zipfian; D 95/5 read/insert latest;
// E 95/5 scan/insert zipfian with maxscanlength 100 uniform; F 50/50
// read/read-modify-write zipfian; all with recordcount = operationcount =
// 1000 and 1000-byte records.
//
// # Keys
//
// Record n is named as CoreWorkload.buildKeyName with zeropadding 1: "user"
// followed by the decimal of n (insertorder=ordered) or of YCSB's
// fnvhash64(n) (hashed; e.g. record 0 is "user6284781860667377211"). The
// load phase inserts records 0..recordcount-1 (LoadKeys). Transaction
// inserts continue that sequence at recordcount, recordcount+1, ... and are
// visible to later operations at once (YCSB's acknowledged counter with a
// single client).
//
// # Request distributions
//
//   - uniform: uniform over the loaded records 0..recordcount-1 (as YCSB,
//     inserted records are never chosen).
//   - zipfian: YCSB's ScrambledZipfianGenerator over recordcount +
//     expectednewkeys + 1 items, where expectednewkeys =
//     int(operationcount × insertproportion × 2). A zipfian rank is drawn
//     with Gray et al.'s algorithm over a fixed 10^10+1 items (YCSB's
//     ITEM_COUNT, with its precomputed ZETAN = 26.46902820178302 for theta
//     0.99) and mapped to fnvhash64(rank) mod itemcount; records not yet
//     inserted are redrawn (CoreWorkload.nextKeynum). For a theta other than
//     0.99, zeta over the 10^10+1 items is computed by summing 10^4 terms and
//     an Euler–Maclaurin tail rather than YCSB's 10^10-term loop. (Some YCSB
//     revisions set ITEM_COUNT to 10^16 while keeping the 10^10 ZETAN; we use
//     the consistent 10^10 pair.)
//   - latest: YCSB's SkewedLatestGenerator: newest record minus a
//     ZipfianGenerator offset whose item count grows with inserts (zeta
//     extended incrementally, eta kept on the construction-time item count
//     as in YCSB).
//   - hotspot: YCSB's HotspotIntegerGenerator over the loaded records: with
//     probability hotspotopnfraction a uniform record among the first
//     int(recordcount × hotspotdatafraction), else among the rest.
//
// Scan start keys use the request distribution; scan lengths are uniform in
// [minscanlength, maxscanlength] or, with scan_length_distribution zipfian,
// YCSB's unscrambled ZipfianGenerator over that range (theta 0.99).
//
// # Zipf exponent versus YCSB's zipfian constant
//
// YCSB's zipfian constant theta (0 < theta < 1, default 0.99) is the
// exponent of Gray et al.'s approximate Zipf sampler over 10^10 virtual
// items whose ranks are hashed onto the key space, so popularity is
// scattered over keys, several ranks can share a key, and the skew is mild:
// the hottest rank gets only 1/ZETAN ≈ 3.8% of requests whatever the record
// count.
//
// ZipfExponent s > 0 (not a YCSB parameter; GlobLease uses s = 4) selects
// instead a plain, exact Zipf law over the actual key space: p(rank k) ∝
// 1/k^s for ranks 1..N with N = recordcount + expectednewkeys, sampled by
// inverse CDF over a precomputed cumulative table (binary search). Ranks are
// not scrambled: rank k is record k-1, so record 0 ("user6284781860667377211"
// when hashed) is the hottest; draws of records not yet inserted are
// redrawn, which leaves an exact Zipf law over the existing records. s may
// exceed 1 and the skew is then steep: with s = 4, rank 1 gets
// 1/zeta(4) = 90/pi^4 ≈ 92.4% of requests. With latest, s applies to the
// offset back from the newest record (offset 0 = newest). When ZipfExponent
// is set, ZipfianConstant is ignored. The table costs 8 bytes per key and
// N is limited to MaxExactZipfKeys.
//
// # Transactions
//
// TxnSpec and TxnGenerator (txn.go) are a transactional workload, Catenae's
// microbenchmark (seed 000 §4.3.4), not a YCSB one: records "txn0".. start
// absent; each transaction touches min_keys..max_keys distinct records
// (uniform or Zipf θ, Gray et al.'s generator unscrambled), declared in the
// partition order the caller gives (so every transaction is chainable),
// read-only with probability read_only_proportion, else updating each key
// by an add or a read and a write. docs/sim.md has the fields and defaults.
//
// # Arrivals
//
// PoissonGap and Arrivals give exponential inter-arrival times (a Poisson
// process) for open-loop clients.
package workload
