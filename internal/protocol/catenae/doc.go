// Package catenae is Catenae (seed 000 §4.3, Liu's thesis; digest
// ../shared/seeds/notes/000-*.md §3; our plan docs/design/catenae.md):
// serializable transactions over data fully replicated in every region.
// Every region receives every read-write transaction through periodic epoch
// messages, runs the same batch on its own transaction chains, and a
// conflicting transaction commits in the order a majority of regions ran it.
// A non-conflicting transaction commits in about half a round trip (one
// way from the farthest region, plus the epoch), a conflicting one in about
// one round trip, a read-only one in its own region.
//
// # Roles
//
// Each region's first node is its coordinator (§4.3.1): it cuts epochs,
// exchanges epoch messages, schedules batches, runs the region's chain
// servers and holds the region's committed copy of every key (its store).
// Every node is a gateway: it forwards its clients' transactions (Submit)
// to its region's coordinator and answers them (Result). A get is a
// read-only transaction of one read; a put or delete one write;
// conditional writes are refused (use a transaction's add).
//
// # Epochs (§4.3.2)
//
// Epoch e is [e·epoch, (e+1)·epoch) of the coordinator's wall clock. The
// read-write transactions a coordinator receives while epoch e is open are
// its payload for e, with each one's offset into the epoch (the thesis's
// "local physical timestamp"). When its clock passes the epoch's end the
// coordinator closes the payload, persists it, and sends every other
// coordinator an epoch message with its newest three payloads (the
// thesis's redundancy against loss: the current and the previous two) and,
// when a region's acknowledgement is overdue (two of its round trips and
// three epochs), up to `resend` older payloads it lacks, each epoch going on
// from where the last resend stopped, with runs of empty payloads merged
// into one (a region cut off for thousands of epochs catches up in a few
// round trips: TestLongPartitionDrains). A message also
// carries the sender's first epoch, per region the newest epoch through
// which it holds every payload (what others resend), and its applied mark
// (what others may forget). A payload after a restart or a clock jump
// covers the epochs it missed (From..EID) and holds no transaction for the
// earlier ones. A payload never changes once sent.
//
// # Batches and components (§4.3.3, "Receive" and "Schedule")
//
// Batch e is the transactions of every region's payload for e, in
// canonical order (region, then position). A coordinator schedules batch e
// once it holds every region's payload through e, lower epochs first, so
// every region schedules the same batches in the same order. A batch splits
// into components: transactions linked by shared keys. Across batches,
// every transaction of batch e precedes every transaction of a later batch
// on each key they share; a component waits, on each of its keys, for the
// earlier components there to be decided (§4.3.3, "Commit Conflicting
// Transactions": "If there are uncommitted dependent transactions the
// pre-committed transaction has to wait").
//
// # Execution (§4.3.3, "Execute Transactions")
//
// A region runs a component on its chain servers: each transaction starts
// at its offset and visits its keys in declared order (the chain: the
// chainable model, a transaction's keys known up front), spending
// `chain_hop` plus an exponential service time of mean `chain_service` at
// each, drawn from the coordinator's random source; the region's report
// orders the component's transactions by when each reaches the end of its
// chain, ties by canonical position. The chain servers are modelled inside
// the coordinator (they are separate processes in the thesis); their speed
// is what lets regions order conflicting transactions differently, as the
// thesis measures (Fig. 4.24).
//
// Ours, not the thesis's: one order per component, by the time each
// transaction ends its forward pass, instead of Rule 1's order at the first
// shared partition of the backward pass plus a resolver for the cycles of
// Fig. 4.27. A total order by one timestamp per transaction satisfies Rule
// 1 (a transaction is ordered after another on every shared key once it is
// on the first) and Rule 2 (it runs on a key after those before it), and
// cannot form Fig. 4.27's cycle, so no resolver is needed. The reorder-chain
// teeth (each key ordered by arrival at that key) shows what the rule
// prevents: the checker rejects those histories.
//
// # Validation (§4.3.3, "Validate Transactions")
//
// A component of one transaction needs no validation: every region runs it
// on the same committed state. A conflicting component (two or more) is
// decided by the regions' reports, carried in epoch messages: a region's
// report joins its open payload and counts, there as everywhere, only once
// that payload is closed and persisted (persist before send): the order a majority
// of regions reported alike ("when there are a majority of DCs that have
// executed the transaction with the same dependency, then the transaction
// will be committed with this dependency"); or, once every region reported
// and no majority agrees, the canonical order. The thesis aborts there; we
// commit in a fixed order every region knows, which is as serializable and
// loses no work. A region's report never changes once it counts, and two
// majorities meet, so every region decides the same order.
//
// With `order: canonical` (not in the thesis) every region orders a
// component canonically and no vote is needed: conflicting transactions
// commit as fast as non-conflicting ones. It shows what speculation costs
// on this simulator, whose chain servers have no real execution time.
//
// # Commit
//
// A decided component runs on the region's committed copy in the decided
// order: reads see the writes before them, an add writes what it read plus
// its delta (an add to a non-integer aborts its transaction, the same way
// in every region), and the writes are stored with one version per
// transaction (its batch and component, then its rank in the order), so
// each key's versions follow its writes. Every region computes the same
// writes from the same state: this is the thesis's catch-up ("apply the
// majority's writes") for the regions whose own order lost, and no
// transaction ever reads a write that is not decided, so there are no
// cascading aborts. The origin answers its clients when it has applied the
// component.
//
// # Read-only transactions (§4.3.3, "Read Only Transactions")
//
// A read-only transaction is served by its region's coordinator, with no
// message between regions, from the committed copy as of the applied mark:
// every batch through the mark, none after (the writes of later batches
// are kept beside, in memory, until the mark passes them). A client's
// read-only transaction waits until the mark reaches the batch of the
// newest write it was answered (read-your-writes; the thesis's retry after
// a delay becomes this wait).
//
// # Guarantee
//
// Serializability, in the order: batches by epoch; within a batch,
// components in any order (they share no key); within a component, its
// decided order. Each client's transactions keep their order (strong
// session serializability), since a client's write is answered only once
// its batch was scheduled and its later transactions are in later batches,
// and its reads wait for its writes' batches. Not strictly serializable: a
// read-only transaction in another region may miss a write already
// answered. Single-key histories are sequentially consistent
// (Keyspace.Model). The tests check strong session serializability
// (TestSwarm), with faults: loss, duplication, reordering, partitions,
// crashes of any node and clock offsets.
//
// # Clocks
//
// Clocks only cut epochs. Correctness assumes nothing of them: a batch is
// whatever each region's payloads for an epoch number hold. Skew costs
// latency: a coordinator whose clock runs behind closes its epochs late and
// every region waits for its payload. The thesis assumes NTP-synchronised
// coordinators; the swarm runs offsets of up to 30 ms, three epochs.
//
// # Persistence
//
// A coordinator persists its first epoch, each of its payloads (before it
// is sent), each report (before it counts or is sent), its last closed
// epoch, its applied mark, and the committed records. A handler's
// committed records are written at its end, after one redo record that
// holds them all, and before the applied mark that covers them: a crash
// keeps a prefix of a handler's unsynced writes (a torn crash: in the
// simulator, and Pebble's log on a real node), and a restart completes the
// records the redo record holds, so a component is never half applied.
// Other regions' payloads are held in memory only: a restarted coordinator reloads its own
// payloads some region may still lack (those every region applied are
// tombstones), tells the others it holds theirs only through its applied
// mark, and they resend the rest. It re-decides the batches above its
// mark; a component whose keys already hold its (or a later) version was
// applied before the crash and is skipped. Its gateways' clients are
// answered after a restart when their transactions are decided; those of a
// skipped component get ErrTimeout (it committed; its results were not
// kept). Read-only
// transactions wait after a restart until every batch scheduled before it
// is applied (the store may hold writes above the mark).
//
// # Failures
//
// Scheduling needs every region's payload, so a region that is down or cut
// off stops every region's read-write transactions until it is back (as in
// the thesis, §4.3.5; the thesis's mode that proceeds on a majority of
// epoch messages is not built). Read-only transactions continue in every
// region whose coordinator is up, from the applied snapshot, except a
// session's whose own write is in a batch not yet applied there: it waits.
// In a region whose coordinator is down they wait for it (the client's
// timeout, or the gateway's minute, comes first). There is no secondary coordinator: a
// coordinator's crash is survived by its restart from its store.
//
// # Limits
//
// A coordinator remembers the last 32,768 Submits (duplicate filter: a
// network duplicate delayed beyond them would run again) and sessions
// (read-your-writes: a forgotten session's reads wait for the newest
// forgotten write's batch), and holds at most 32,768 waiting read-only
// transactions (beyond: ErrUnavailable). A session is a client of one
// gateway node: a client that moves to another node of its region keeps
// read-your-writes only once its write's batch is applied. A batch holds at
// most 2^20 transactions, a region's payload at most 24 MiB of keys and
// values (beyond: ErrUnavailable, retry), and an epoch message resends at
// most 32 MiB of older payloads.
// The chain servers are modelled, not separate processes.
package catenae
