package check

// Transactional histories (issue 16): what the serializability checker
// reads. A transaction is recorded as its client saw it, with the versions
// the system reports: each committed transaction's writes carry one
// version (its place in the system's claimed order of writes to each key),
// and each read reports the version of the write it read. The checker
// builds Adya's dependency graph from them (write-write by version order,
// write-read by the version read, read-write anti-dependencies to the next
// version) and cross-checks them against the values: a read must return
// the value its version's writer wrote, and versions of a key must be
// unique, so a system that misreports versions is caught by its values.

// Txn is one recorded transaction.
type Txn struct {
	Client  int64 // the session: a client's transactions are in program order (by Call)
	Call    int64 // true (simulated) time the client sent it, ns
	Return  int64 // true time the reply came; Never if unknown
	Outcome Outcome
	// Version is the version a committed transaction's writes installed
	// (every key it wrote); unset for a read-only one, or one whose
	// outcome is unknown and which reported none.
	Version Position
	Ops     []TxnAccess
}

// TxnAccess is what a transaction did at one key, in declared order.
type TxnAccess struct {
	Key string
	// Read: the operation observed the key (a read, or the read of a
	// read-modify-write): ReadValue/ReadFound are what it saw, ReadVersion
	// the version of the write it read (unset: the initial absent value).
	Read        bool
	ReadValue   string
	ReadFound   bool
	ReadVersion Position
	// Write: the operation wrote WriteValue (WriteFound false: deleted).
	Write      bool
	WriteValue string
	WriteFound bool
	// WriteVersion, if set, is the version this write installed at Key,
	// for systems whose versions are per key (unset: Txn.Version). With
	// one version per transaction every key's order is the restriction of
	// one total order, so a write cycle (G0) can only show up here.
	WriteVersion Position
}
