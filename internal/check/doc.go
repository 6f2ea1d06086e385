// Package check decides whether a History of client operations on a
// key-value store satisfies a consistency model. Each key is a register:
// writes put a value (Found) or delete (writing "absent"); reads return a
// value or absent. Init gives initial values (a missing key starts absent).
// Failed operations are ignored, and so are reads without an OK outcome.
// An Unknown write (Return == Never) may take effect at any point after its
// Call, or never. Intervals are closed, as in porcupine: an operation that
// returns at t is concurrent with one that is called at t.
//
// Transactional histories ([]Txn) have their own checker, Serializable
// (see "serializable" below).
//
// All checkers are deterministic: keys are visited in sorted order and
// reports name operations as `c<client> W("k")="v" [call, return]` with
// times in ms. Check dispatches by model name (see Models).
//
// # linearizable
//
// Linearizable(h, timeout): each operation takes effect atomically at a point
// between its Call and Return (an Unknown write: after its Call, or never),
// in one order per key consistent with every read. Linearizability is local,
// so porcupine checks each key's partition separately. Sound and complete:
// Pass and Violation are proofs; Undecided only when the timeout runs out.
// On a violation, Key is the first failing key in sorted order and Detail
// names the first operation (by Call) that fits in no linearizable prefix,
// the write of the value it read and the operations around it.
// LinearizableVisual writes porcupine's HTML visualization for debugging.
//
// Conditional writes (Kind CondWrite: compare-and-set, by value) are part
// of the register model: one that succeeded took effect where the key
// held its expected value; a conflict (Op.Conflict) took no effect, at a
// point where the key held another value; an Unknown one took effect at
// a point where the condition held, or never. The other checkers see
// conditional writes that did not conflict as writes, and ignore conflicts.
//
// # sequential
//
// Sequential(h, budget): sequential consistency (Lamport): one total order of
// all operations, across all keys, that keeps each client's program order
// (ops of one Client ordered by Call) and in which every read returns the
// latest preceding write of its key, or the initial value. Real time is
// ignored. Unknown writes may be left out, unless a read observes them. SC
// is not local: keys are checked jointly. The checker
//
//  1. maps each read to the unique write of its value (reads-from); a read
//     of a value that nothing wrote (nor Init) is a Violation. Reads of
//     absent with several candidate deletes (or Init) stay ambiguous.
//     Unobserved Unknown writes are dropped (always allowed); Unknown writes
//     an ambiguous read might observe are optional;
//  2. tries the order the system reports (Op.Pos: a write's version, a
//     read's view), before anything costlier: the clients' operations
//     merged in program order by position; a write whose reply was lost
//     has none and goes just before the first read that observed it. A
//     witness that replays is a Pass; positions can only cost time;
//  3. builds the graph program order ∪ reads-from ∪ (init-read before the
//     key's writes) and saturates it to a fixpoint (at most 64 rounds) with
//     the orderings every witness needs: for r reading w and another write
//     w' of the key, w' ->* r implies w' -> w, and w ->* w' implies r -> w'.
//     A cycle is a Violation, reported as the cycle of operations with the
//     reason for each edge. Reachability uses per-client frontiers, so it
//     costs O(ops × clients) memory;
//  4. looks for a witness: first the fast path, porcupine's per-key
//     linearizations (capped at 2s) merged with program order — valid
//     whenever the history is linearizable, because linearizability is
//     local; then a depth-first search over placements of operations, with
//     reads and "free" writes placed eagerly without branching (both provably
//     lose no witness), writes that would overwrite a value still needed
//     held back, dead states pruned, and failed states memoized (128-bit
//     Zobrist hash of per-client positions and per-key last writer), bounded
//     by budget placements (<= 0: DefaultBudget).
//
// Every Pass has a witness checked by replay; every Violation is a proof
// (the reads-from analysis, a cycle of necessary orderings, or an exhausted
// search), up to the 2^-128-scale chance of a hash collision in the memo.
// The checker is complete except that it returns Undecided when the budget
// runs out (deciding SC is NP-complete). Histories from a linearizable
// system (~5,000 ops, 50 clients, 500 keys) pass in tens of ms. Large
// histories that are SC but far from linearizable (no usable real-time
// order), especially with many deletes, can exhaust the budget: Undecided.
//
// # regular
//
// Regular(h): every key is a multi-writer regular register, the guarantee of
// a quorum system whose reads overlap writes but not each other. A read r may
// return the initial value only if no (OK) write of the key completed before
// r.Call; otherwise the value of a write w (a delete for absent) with
// w.Call <= r.Return that was not overwritten before r began: no OK write w'
// with w.Return < w'.Call and w'.Return < r.Call. Unknown writes never
// complete, so they never overwrite and can be read any time after their
// Call. Exact (sound and complete), O(n log n). Every linearizable history
// is regular; regular histories need not be sequentially consistent, and SC
// histories need not be regular (stale reads).
//
// # valid-reads
//
// ValidReads(h): every read returns the initial value or the value of some
// write of its key (a delete, for absent) with Call <= the read's Return:
// no out-of-thin-air or future values. Exact, O(n log n). Implied by all
// the other models except that SC ignores real time (an SC history can read
// a value before its write's Call).
//
// # none
//
// Check("none", h) always passes.
//
// # serializable
//
// Serializable(h []Txn) checks a transactional history (txn.go; issue 16)
// instead of a History, so Check does not dispatch to it: the scenario
// layer records []Txn and calls it. StrictSerializable and SerializableWith
// (SerializableOpts{Sessions, RealTime}) add orders; their models are
// "strict-serializable" and "strong-session-serializable". CheckTxns
// dispatches by those names (see TxnModels).
//
// The checker builds Adya's direct serialization graph, in the manner of
// Elle, from the versions the system reports. Its nodes are the committed
// transactions (Outcome OK) and the Unknown ones some committed read
// observed (a read of their version makes them committed; unobserved ones
// are left out, which is always allowed). An Unknown (or OK) transaction
// that reported no version is given the version of a read of its value
// when it is the only such writer of the key; a read several such writers
// could explain is skipped. Failed transactions write nothing. The edges:
//
//   - ww: each key's writes in version order (TxnAccess.WriteVersion, else
//     Txn.Version), from each to the next;
//   - wr: from the writer of the version a read reports to the reader;
//   - rw (anti-dependency): from a reader of version v to the writer of
//     the key's next version (readers of the initial state: to the first);
//   - with Sessions: each client's transactions in Call order (an Unknown
//     one orders nothing after it: it may commit after the client moved
//     on); with
//     RealTime: T1 -> T2 whenever T1.Return < T2.Call (closed intervals),
//     through a chain of one marker per returned transaction, so O(n)
//     edges.
//
// Only OK transactions' reads count (the others have no results). The
// anomalies, named in Result.Anomalies and explained in Detail with the
// transactions involved (one example each, and a count):
//
//   - duplicate-version: two committed transactions claim one version of
//     a key (an Unknown one sharing a committed one's version is dropped);
//   - value-mismatch: a read returned a value other than what its
//     version's writer wrote (or a value at the initial, absent version);
//   - G1a (aborted read): a read of a version whose writer Failed, or that
//     no transaction wrote;
//   - internal: a transaction read the version it writes itself — its read
//     comes before its write, so it saw its own future;
//   - G0 (write cycle: ww only), G1c (circular information flow: ww and
//     wr, with a wr), G2 (with an rw: write skew, read skew, lost update;
//     Detail says "G-single" when the cycle shown has one anti-dependency);
//   - lost-update: two committed transactions read one version of a key
//     and both wrote it (also a G2, named directly, as Elle does);
//   - G0/G1c/G2 with suffix -session or -realtime: a cycle that needs a
//     session or real-time edge (only with those options).
//
// G1b (intermediate read) does not apply: a transaction writes a key at
// most once (wire.Txn.Check), so no version is intermediate. Internal
// consistency within a transaction reduces to the "internal" check: the
// API declares at most a read then a write of a key, so a transaction
// never reads after writing. With one version per transaction (the usual
// case) every key's order is the restriction of one total order, so G0 can
// only arise from per-key WriteVersions; a store that installs writes out
// of version order shows up instead as value-mismatch or G2.
//
// Cycle search: Tarjan's strongly connected components (iterative) over
// ww, then ww+wr, then all dependency edges, then with the orders; in each
// non-trivial component, the shortest of the cycles through up to 8 edges
// of the new kind, each found by breadth-first search trying the narrower
// kinds first (so a G-single is preferred to a longer G2). Tests compare
// verdicts with a backtracking search for a serial order on small random
// histories (TestSerializableReference). Verdicts are
// exact for what the versions claim: Pass means the graph is acyclic, so
// (Adya) a serial order exists — up to skipped ambiguous reads; every
// Violation names its witnesses. Cost is
// O((n + e) log n); 100,000 transactions check in a few hundred ms.
//
// Catenae (seed 000 §3.3 / thesis §4.3) claims serializability, "the
// dependency graph stays acyclic": its runs must pass Serializable. Its
// read-only transactions read a local snapshot, which may be stale, so
// StrictSerializable is not its guarantee (a stale snapshot is
// G2-realtime). Catenae's tests use Serializable; strict is for protocols
// that promise it (e.g. a single-node reference that runs OpTxn
// atomically), and a strict failure on Catenae is a finding to report, not
// a bug.
package check
