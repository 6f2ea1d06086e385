// Package simtest is the seeded-simulation harness every protocol's tests
// share (FoundationDB's and TigerBeetle's "simulation is the test"), written
// once so that adding a protocol adds only its configuration:
//
//   - Swarm runs a range of seeds, each drawing its own cluster shape and
//     faults from a protocol's generator (swarm testing), a third of them
//     with faulty stores and torn crashes; it checks every history against
//     the model the protocol claims, that no invariant broke and that every
//     fail-stop was an injected fault, and prints each failing seed with
//     the one command that replays it.
//   - Regressions replays the seeds that once found bugs, forever.
//   - Deterministic runs one seed twice and compares trace hashes, so
//     hidden nondeterminism (a map iteration, the global random source)
//     shows up in CI rather than as a failure nobody can replay.
//   - Teeth switches a safety rule off (the caller's generator does) and
//     requires the checker to reject at least one of N seeds: a checker
//     that passes everything proves nothing.
//   - Increments runs read-then-conditional-write clients (the RESP
//     front end's INCR) under faults and checks the conditional writes
//     linearizable, for protocols that apply them; its Teeth does the
//     same with a rule off and requires a rejection.
//   - Interaction drives a cluster step by step from datadriven scripts
//     (testdata/*.txt, in the style of etcd raft's interaction tests),
//     printing every message as one line.
//
// Flags, shared by every test binary that imports the package:
//
//	-seed N    run only seed N (the replay command printed on a failure)
//	-seeds N   seeds per swarm (per level combination or mode)
//	-first N   the first seed of each swarm's range (default 1)
//	-soak      deep soak: every variant, 5000 seeds per swarm unless -seeds
//
// scripts/soak.sh runs the soak for every protocol; docs/testing.md is the
// guide.
package simtest
