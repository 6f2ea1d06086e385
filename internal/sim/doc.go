// Package sim is Lightcone's deterministic discrete-event simulator: a whole
// cluster in one goroutine, in virtual time, from one seed (the FoundationDB
// and TigerBeetle way; DESIGN.md "Simulator").
//
// What it models:
//   - Time: a priority queue of events ordered by (time, scheduling order);
//     nothing reads the wall clock, so a simulated minute takes as long as
//     its events take to process.
//   - Network: each message's one-way delay is drawn from the world's
//     latency model for the region pair (base + non-negative jitter; 0 to
//     self). Links are FIFO like TCP unless reordering is on. Faults: loss,
//     duplication, reordering (an extra delay that may overtake), and
//     partitions, any sets, asymmetric too (Block, Partition, Heal).
//   - Messages: with Config.Codec set, every message between nodes travels
//     as its encoding, encoded at send and decoded afresh at each delivery,
//     as on a real network, so a codec bug fails the run and no two nodes
//     share a message; without it, messages are shared pointers.
//   - Clocks: each node's physical clock reads true time + offset + drift ×
//     elapsed; offsets and drifts are drawn from ClockConfig or set with
//     SetClock (jumps included). Timers run on the node's clock.
//   - Storage and crashes: each node has a store.Mem. After every handler the
//     node syncs its store and only then releases the handler's messages
//     and replies (persist before send). Crash drops unsynced writes, timers
//     and all volatile state; Restart builds a fresh replica over the store.
//     Messages already in flight to a crashed node are lost if they arrive
//     while it is down, but delivered if they arrive after its restart, as
//     on a real network: a restarted replica must not mistake answers meant
//     for its previous incarnation for its own.
//   - Storage faults and fail-stop (Config.StoreFaults): stores fail reads
//     and writes at random (store.Faulty), and a crash may be torn, keeping
//     a prefix of the unsynced writes. A replica that calls FailStop — its
//     store failed, or an invariant broke (env.Invariant) — has its
//     handler's output dropped and crashes; it restarts after RestartAfter.
//     Failures lists every fail-stop; a broken invariant goes to
//     Config.OnViolation, or panics with the seed.
//   - Clients: Submit delivers a request to a gateway after the client's
//     region-to-gateway delay; replies come back through Config.OnReply.
//
// Determinism: all randomness comes from PCG streams derived from the seed
// (one per node, one for the network, one for clocks); the simulator never
// iterates a map where order matters. TraceHash folds every processed event
// into a hash, so two runs of a seed can be compared cheaply. A protocol
// that keeps time from advancing (a zero timer re-armed forever) makes the
// simulator panic with its seed instead of hanging.
package sim
