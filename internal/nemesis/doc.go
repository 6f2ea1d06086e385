// Package nemesis tests Lightcone from the outside, the way a hostile
// tester does: it starts a real cluster (one `lightcone server` process per
// node, three regions with WAN emulation, internal/localcluster), runs
// concurrent go-redis clients against every node and keyspace, records
// every operation's history, and meanwhile injects faults:
//
//   - kill: kill -9 a node, restart it after Hold;
//   - partition: isolate a node from all its peers (the transport's fault
//     hook, POST /debug/transport) for Hold;
//   - link: cut the link between two nodes, both ways, for Hold;
//   - pause: SIGSTOP a node for Pause (set it longer than every lease),
//     then SIGCONT;
//   - clock: step a node's wall clock (POST /debug/clock) to a new offset
//     within the tightest clock bound a keyspace claims
//     (protocol.Keyspace.ClockBound), or within ClockStep when none claims
//     one — a step beyond a protocol's stated assumption would be allowed
//     to break it, so the nemesis never makes one. The offset is the
//     machine's: it stays across kills (the node restarts with
//     --clock-offset), so a protocol that reads only the monotonic clock
//     while running meets the step when it restarts;
//   - migrate: move a random key's mastership to a random region (RESP
//     LC.MIGRATE, retried while the key is busy) in every keyspace whose
//     protocol supports it;
//   - disk: fill a node's data file system (its own small tmpfs) with a
//     ballast file for Hold, then remove it. Root only: a default kind
//     when the run is root. The node must refuse client writes ("ERR disk
//     full", recorded as not written) and keep running; one that exits is
//     a crash and fails the run.
//
// Faults come one at a time, at random nodes, every Interval (±50%), from
// a seeded source, in rounds: each round is a random order of all the
// kinds, and the run goes on past Duration until a round is complete, so
// even a short run injects every kind. A node that exits by itself (not
// killed) is restarted and reported as a crash, unless a disk fill may
// rightly have stopped it. After Duration the nemesis heals everything, lets the
// clients run for Calm, then checks that every node serves every keyspace
// again (a write and a read, bounded by RecoverWithin).
//
// Each keyspace's history is checked with the model its protocol claims
// for its settings (protocol.Keyspace.Model): Porcupine for linearizable
// levels, the sequential checkers for lease and meteor (internal/check).
// Outcomes are recorded as the client saw them: a write that got no
// answer, a timeout or any error other than UNAVAILABLE (which the RESP
// front end documents as "took no effect") has an unknown outcome — it
// may or may not have happened, and its client continues as a new session
// so that program order stays true; a request that never reached a node
// (the dial failed) failed. A failed read constrains nothing.
//
// Clients write unique values with SET (and delete with LC.DEL) and read
// with GET. In keyspaces checked for sequential consistency they use
// LC.SET and LC.GETAT instead, which reply where the protocol's total order
// places each write and read (check.Op.Pos; a write of unknown outcome is
// placed at the version a read saw its value with), and they only put: the
// checker tries that order as its witness before it searches, which a few
// minutes of history would otherwise exhaust.
//
// The run is not deterministic (real time and the scheduler decide the
// interleaving), but the seed fixes the faults' kinds, targets and timing,
// and the workload's choices; a failure prints the seed and the command
// that runs it again. `lightcone nemesis` is the command line.
package nemesis
