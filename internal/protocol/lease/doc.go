// Package lease is GlobLease (seed 003, the GlobLease paper §III; thesis
// seed 000 §4.1) as a Lightcone protocol: sequentially consistent reads
// served in the reader's own region under per-key leases, writes ordered
// at a per-key master. This is the first cut of issue 5: the lease
// protocol with static masters. Master migration, master failure and
// election, and affiliated nodes are not built yet.
//
// # Algorithm
//
// Every key has a replication group — its replica on every region's ring —
// and a master in the group (the region the key hashes to). A client's
// gateway sends reads to the key's replica in its own region and writes to
// the master.
//
//   - Read (Alg. 1): the master answers from its store; a non-master
//     answers if it holds a valid lease on the key; otherwise it asks the
//     master for one (Renew) and answers when the grant, which carries the
//     master's current value, arrives.
//   - Write (Alg. 2): the master stamps the write with its HLC and applies
//     it. Passive update (Config.Passive), when the key exists and no
//     replica holds a valid lease: done; the others get it lazily. Active
//     update otherwise (and always for a key's first write): the write
//     goes to every replica and completes once a majority of the group has
//     it and every replica holding a lease has acknowledged it — or that
//     lease has expired. Versions make late or repeated updates harmless.
//
// # Lease timing and the clock assumption
//
// Every clock's rate is within ρ = MaxDriftPPM of true time; offsets do not
// matter, because each side only measures durations on its own clock.
//
//   - A non-master's lease starts when the grant arrives (§III.D) and lasts
//     LeaseLength (L) on its clock — but it accepts a grant only for its
//     outstanding request and only within RenewTimeout (B) of asking.
//   - The master counts a grant as held from the moment it sends it, for
//     (B+L)·(1+ρ)/(1−ρ) on its clock, until the acknowledgement arrives; then
//     its record runs L·(1+ρ)/(1−ρ) from the acknowledgement (§III.D's rule,
//     with the drift made explicit). Either way the master's view of a lease
//     outlasts the lease in real time. The pending rule closes a race the
//     paper leaves open (docs/design/lease.md §1).
//   - A restarted master has lost its records, so until (L+B)·(1+ρ)/(1−ρ)
//     after it starts it treats every replica as a holder.
//   - Active updates do not extend leases: only grants create them, so the
//     master always knows of every lease that can exist.
//
// # Guarantee
//
// Sequentially consistent per key: for each key, one order of its
// operations explains every client's view. A write completes only when no
// lease holder lacks it, so a lease-served read never returns a value
// older than a completed write; a replica's versions only grow. It is not
// sequentially consistent across keys: an active write reaches holders one
// by one, so two readers may see writes of two keys in opposite orders
// (IRIW; docs/design/lease.md §2). check.SequentialPerKey verifies the
// claim in the seeded simulations.
package lease
