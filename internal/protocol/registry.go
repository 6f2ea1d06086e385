// Package protocol is the registry of keyspace protocols. Each protocol is
// one package under internal/protocol/<name>/ that registers itself once, in
// an init function, with everything the rest of Lightcone needs of it: its
// name, its typed settings (one struct with YAML tags, defaults and
// validation), its message types for the codec, how to build a keyspace for
// a topology (replica factory, guarantee and checker model, latency floors,
// counters). The server, the simulator's scenarios, `lightcone sim`, bench,
// realrun, the demo and the CLI read this registry and never name a
// protocol (DESIGN.md, "Protocols are plug-ins"; internal/lint keeps it so).
// Importing internal/protocol/all registers every protocol.
package protocol

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Definition is what a protocol registers.
type Definition struct {
	// Name is the protocol's name in configuration (`protocol: <name>`),
	// lowercase.
	Name string
	// Title is the system's name in the literature ("GlobLease").
	Title string
	// Summary is one line for listings.
	Summary string
	// Default marks the protocol a keyspace gets when it names none
	// (exactly one protocol sets it).
	Default bool
	// NewSettings returns a pointer to the protocol's settings struct with
	// every field zero (zero fields take the documented defaults at Build).
	// Its YAML tags are the setting names; decoding is strict.
	NewSettings func() any
	// Build validates settings (a value NewSettings returned, possibly
	// decoded into) against the topology and builds the keyspace. Errors
	// name the setting and its valid range.
	Build func(t *topo.Topology, settings any) (Keyspace, error)
	// MessageTypes are the protocol's messages, for the codec.
	MessageTypes []wire.MsgType
	// PrimeReads says reads are local only once a region holds per-key
	// state a long-running cluster would have (leases): benchmarks and the
	// demo on real processes read every key once per region, unmeasured,
	// before they measure.
	PrimeReads bool
	// Locking says clients must acquire a key (wire.OpAcquire) before
	// reading or writing it and release it (wire.OpRelease) after: the
	// simulator's clients bracket each operation with them.
	Locking bool
	// Demo is the configurations `lightcone demo` runs this protocol in,
	// side by side with the others'. Empty: the demo leaves it out.
	Demo []Preset
	// Conditional says when the protocol applies conditional writes
	// (wire.Request.Cond) atomically, as a phrase for refusals that name
	// the ways to get them ("with every setting", "with one replica per
	// key"); "" when never. Its keyspaces implement WriteOrderer.
	Conditional string
	// Transactions says when the protocol runs transactions (wire.OpTxn)
	// serializably, as a phrase for refusals that name the ways to get
	// them ("on a single-node cluster"); "" when never. Its keyspaces
	// implement Transactional.
	Transactions string
}

// Transactional is implemented by the keyspaces of protocols whose
// Definition.Transactions is set.
type Transactional interface {
	// RunsTxns reports whether these settings run transactions.
	RunsTxns() bool
}

// WriteOrderer is implemented by the keyspaces of protocols whose
// Definition.Conditional is set.
type WriteOrderer interface {
	// OrdersWrites reports whether these settings order each key's
	// writes, so that a conditional write is checked and applied
	// atomically.
	OrdersWrites() bool
}

// CondRefusal is nil if keyspace ks of protocol d applies conditional
// writes, and otherwise the error they get: ErrInvalid naming the
// protocols and settings that apply them. The server's keyspace mux
// (keyspace.Def.CondRefusal) answers a conditional write with it before
// the protocol sees the request, so a protocol that knows nothing of
// conditions never takes one for a plain write.
func CondRefusal(d *Definition, ks Keyspace) *wire.Error {
	if o, ok := ks.(WriteOrderer); ok && d.Conditional != "" && o.OrdersWrites() {
		return nil
	}
	ways := waysTo(func(o *Definition) string { return o.Conditional })
	return &wire.Error{Code: wire.ErrInvalid, Msg: fmt.Sprintf("%s: this keyspace cannot apply conditional writes "+
		"(compare-and-set, atomic read-modify-write): they need a protocol that orders each key's writes: %s; "+
		"or set the keyspace's rmw: last_writer_wins to make read-modify-write commands non-atomic get-then-put",
		d.Name, strings.Join(ways, "; "))}
}

// TxnRefusal is nil if keyspace ks of protocol d runs transactions
// (wire.OpTxn), and otherwise the error they get: ErrInvalid naming the
// registered protocols and settings that run them. The server's keyspace
// mux (keyspace.Def.TxnRefusal) answers a transaction with it before the
// protocol sees the request.
func TxnRefusal(d *Definition, ks Keyspace) *wire.Error {
	if t, ok := ks.(Transactional); ok && d.Transactions != "" && t.RunsTxns() {
		return nil
	}
	ways := waysTo(func(o *Definition) string { return o.Transactions })
	if len(ways) == 0 {
		ways = append(ways, "none is registered")
	}
	return &wire.Error{Code: wire.ErrInvalid, Msg: fmt.Sprintf("%s: this keyspace cannot run transactions: they need a protocol that runs them: %s",
		d.Name, strings.Join(ways, "; "))}
}

// waysTo lists, for a refusal, each registered protocol whose phrase is
// set, as "<name> <phrase>".
func waysTo(phrase func(*Definition) string) []string {
	var ways []string
	for _, o := range All() {
		if p := phrase(o); p != "" {
			ways = append(ways, o.Name+" "+p)
		}
	}
	return ways
}

// Preset is a named configuration of a protocol's settings.
type Preset struct {
	Label    string // "quorum ONE/ALL"
	Settings string // a YAML mapping of settings: "{read: ONE, write: ALL}"
	// Note is a short line the demo prints under its table about this
	// configuration (for example why its reads are local).
	Note string
}

// Keyspace is one built keyspace of a protocol on a topology.
type Keyspace interface {
	// Factory builds the keyspace's replica on each node.
	Factory() env.Factory
	// Replicas appends the nodes that store key (for preloading data).
	Replicas(dst []wire.NodeID, key string) []wire.NodeID
	// Settings is the effective settings, defaults filled in (a pointer
	// to the same type NewSettings returns).
	Settings() any
	// Describe is the policy in one line, guarantee included.
	Describe() string
	// Model is the consistency model the protocol claims for these
	// settings, as internal/check names it.
	Model() string
	// ClockBound is the bound on every clock's distance from true time
	// that Model assumes; 0 when the claim assumes none.
	ClockBound() time.Duration
	// Floor is the network time an operation from a client in region
	// cannot avoid, given region-to-region one-way delays (where it
	// depends on placement, such as a key's master, the best placement's).
	Floor(region int, op Op, oneWay func(a, b int) time.Duration) time.Duration
	// Load turns a record to preload under key (its version older than any
	// write) into what the replicas store: the stored key and record.
	Load(key string, rec store.Record) (string, store.Record)
}

// SteadyClocks is implemented by keyspaces whose Model may also assume
// that no node's wall clock steps while the node is up and that every
// clock's rate stays within maxDriftPPM of true time's (quorum's
// commit_wait measured; ok false when it does not). The simulator claims
// only valid reads for a run whose faults step a running node's clock or
// whose clocks drift faster.
type SteadyClocks interface {
	AssumesSteadyClocks() (maxDriftPPM float64, ok bool)
}

// Lister is implemented by keyspaces whose nodes keep their user data in
// the node's store, one record per key, so that a node can list the keys
// it holds (RESP SCAN, KEYS, DBSIZE; the server's api.Scanner). Keyspaces
// that do not implement it cannot be listed.
type Lister interface {
	// UserRecord interprets one key of the keyspace's store (as its
	// replicas see it) and its record: ok is false for the protocol's own
	// state; otherwise key is the user key, and live says that its latest
	// version on this node is a value, not a delete.
	UserRecord(stored string, rec store.Record) (key string, value []byte, live bool, ok bool)
}

// ObjectLoader is implemented by keyspaces whose data lives in the
// regions' storage services rather than on nodes (CRIC): preloading a
// record writes objects with put, each to a service address
// (wire.StorageReplica), instead of storing it on Replicas.
type ObjectLoader interface {
	LoadObjects(key string, rec store.Record, put func(svc wire.NodeID, key string, data []byte, meta storagesvc.Meta))
}

// Op is an operation kind for latency floors.
type Op uint8

const (
	// Read is a get.
	Read Op = iota
	// Write is a put or delete.
	Write
)

func (o Op) String() string {
	if o == Write {
		return "write"
	}
	return "read"
}

// Counter is one of a replica's counters or gauges, exported as
// lightcone_<protocol>_<Name> and in /status and gRPC Status.
type Counter struct {
	Name  string // e.g. "renewals_total"; a gauge has no _total suffix
	Help  string
	Gauge bool
	Value float64
}

// Counted is implemented by replicas that export counters. now is the
// node's clock (for gauges such as leases held).
type Counted interface {
	Counters(now int64) []Counter
}

var registry []*Definition

// Register adds a protocol. It panics on a malformed or duplicate
// definition: registration happens at init, and a broken one is a bug.
func Register(d Definition) {
	switch {
	case d.Name == "" || strings.ToLower(d.Name) != d.Name || strings.ContainsAny(d.Name, " \t"):
		panic(fmt.Sprintf("protocol: bad name %q", d.Name))
	case d.NewSettings == nil || d.Build == nil:
		panic(fmt.Sprintf("protocol %s: NewSettings and Build are required", d.Name))
	}
	if _, err := settingNames(d.NewSettings()); err != nil {
		panic(fmt.Sprintf("protocol %s: %v", d.Name, err))
	}
	for _, o := range registry {
		if o.Name == d.Name {
			panic(fmt.Sprintf("protocol %s registered twice", d.Name))
		}
		if o.Default && d.Default {
			panic(fmt.Sprintf("protocol: %s and %s both claim to be the default", o.Name, d.Name))
		}
	}
	dd := d
	registry = append(registry, &dd)
	slices.SortFunc(registry, func(a, b *Definition) int { return strings.Compare(a.Name, b.Name) })
}

// All returns the registered protocols: the default first, then by name.
func All() []*Definition {
	out := slices.Clone(registry)
	slices.SortStableFunc(out, func(a, b *Definition) int {
		switch {
		case a.Default == b.Default:
			return 0
		case a.Default:
			return -1
		}
		return 1
	})
	return out
}

// Names lists the registered protocols' names, the default first.
func Names() []string {
	var out []string
	for _, d := range All() {
		out = append(out, d.Name)
	}
	return out
}

// Default is the protocol a keyspace gets when it names none.
func Default() *Definition {
	for _, d := range registry {
		if d.Default {
			return d
		}
	}
	if len(registry) > 0 {
		return registry[0]
	}
	return nil
}

// Lookup finds a protocol by name ("" is the default). The error lists the
// valid names.
func Lookup(name string) (*Definition, error) {
	if name == "" {
		if d := Default(); d != nil {
			return d, nil
		}
		return nil, fmt.Errorf("protocol: none registered")
	}
	for _, d := range registry {
		if d.Name == name {
			return d, nil
		}
	}
	return nil, fmt.Errorf("protocol: unknown protocol %q (valid: %s)", name, strings.Join(Names(), ", "))
}

// MessageTypes is every registered protocol's message types, for a codec.
// A kind several protocols list (a shared library's, such as rsm's group
// messages in sc and rc) is registered once by wire.NewCodec, which still
// refuses two different types under one kind.
func MessageTypes() [][]wire.MsgType {
	var out [][]wire.MsgType
	for _, d := range registry {
		out = append(out, d.MessageTypes)
	}
	return out
}

// NewCodec is a codec for every registered protocol's messages.
func NewCodec() (*wire.Codec, error) { return wire.NewCodec(MessageTypes()...) }

// Of returns the registered protocol whose NewSettings returns the type of
// settings, for callers that hold typed settings.
func Of(settings any) (*Definition, error) {
	t := reflect.TypeOf(settings)
	for _, d := range registry {
		if reflect.TypeOf(d.NewSettings()) == t {
			return d, nil
		}
	}
	return nil, fmt.Errorf("protocol: no protocol has settings of type %T", settings)
}

// Count is a counter named name (ending in _total).
func Count(name, help string, v uint64) Counter {
	return Counter{Name: name, Help: help, Value: float64(v)}
}

// Gauge is a gauge named name.
func Gauge(name, help string, v int) Counter {
	return Counter{Name: name, Help: help, Gauge: true, Value: float64(v)}
}
