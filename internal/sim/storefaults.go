package sim

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// StoreFaults is the storage fault model (FoundationDB's buggify, for
// disks): each node's store fails reads and writes at random, and a crash
// may keep part of what was not yet synced. A replica whose store fails
// fail-stops (env.Env.FailStop) or refuses the one operation; either way
// the history must still pass its checker.
type StoreFaults struct {
	// ReadError is the probability that a Get fails. Default 0.
	ReadError float64 `yaml:"read_error"`
	// WriteError is the probability that a Put fails; half of the failed
	// Puts have taken effect anyway (store.Faulty). Default 0.
	WriteError float64 `yaml:"write_error"`
	// TornCrash makes every crash (a scheduled one or a fail-stop) keep a
	// random prefix of the unsynced writes, in the order they were made,
	// instead of none (store.Mem.CrashTorn). Default false.
	TornCrash bool `yaml:"torn_crash"`
	// RestartAfter is how long a node that fail-stopped stays down before
	// the simulator restarts it, as a supervisor would; negative: it stays
	// down. It applies to every fail-stop, injected or not. Default 1s.
	RestartAfter time.Duration `yaml:"restart_after"`
}

// Validate checks the fault model; each error names the field.
func (f StoreFaults) Validate() error {
	for _, p := range []struct {
		name string
		v    float64
	}{{"read_error", f.ReadError}, {"write_error", f.WriteError}} {
		if !(p.v >= 0 && p.v <= 1) {
			return fmt.Errorf("store_faults.%s: %g; must be a probability in [0, 1]", p.name, p.v)
		}
	}
	return nil
}

func (f StoreFaults) restartAfter() time.Duration {
	if f.RestartAfter == 0 {
		return time.Second
	}
	return f.RestartAfter
}

// Failure is one fail-stop: when (true time, ns), which node, and why.
type Failure struct {
	At   int64
	Node wire.NodeID
	Err  error
	step uint64 // orders failures at one instant
}

// Injected reports whether the failure came from an injected storage fault
// (StoreFaults): an expected event of the run.
func (f Failure) Injected() bool { return errors.Is(f.Err, store.ErrInjected) }

// Violation reports whether the failure is a broken invariant: a bug.
func (f Failure) Violation() bool { return errors.Is(f.Err, env.ErrInvariant) }

func (f Failure) String() string {
	return fmt.Sprintf("n%d at %s: %v", f.Node, time.Duration(f.At), f.Err)
}

// Failures returns every fail-stop of the run so far, in the order they
// happened.
func (s *Sim) Failures() []Failure {
	var out []Failure
	for _, n := range s.nodes {
		out = append(out, n.sf.fails...)
	}
	slices.SortFunc(out, func(a, b Failure) int { return cmp.Compare(a.step, b.step) })
	return out
}

// InjectedStoreFaults counts the read and write failures the stores have
// injected so far (each one fail-stopped its node or refused an operation).
func (s *Sim) InjectedStoreFaults() (reads, writes int) {
	for _, n := range s.nodes {
		if f := n.sf.faulty; f != nil {
			reads += f.Reads
			writes += f.Writes
		}
	}
	return reads, writes
}

// nodeStoreFaults is a node's part of the storage fault model, and its
// fail-stop state.
type nodeStoreFaults struct {
	faulty  *store.Faulty // nil: no injected errors
	torn    *rand.Rand    // draws torn crashes
	failure error         // the running handler fail-stopped its node
	fails   []Failure
}

// errStopped answers a replica that uses its store after FailStop.
var errStopped = errors.New("sim: the node has fail-stopped")

// nodeStore is the store a replica sees: its node's engine, through the
// fault injector if there is one. Once the node has fail-stopped it refuses
// everything, so no write made after the failure survives a torn crash.
type nodeStore struct{ n *node }

func (v nodeStore) Get(key string) (store.Record, bool, error) {
	if v.n.sf.failure != nil {
		return store.Record{}, false, errStopped
	}
	return v.n.backing().Get(key)
}

func (v nodeStore) Put(key string, rec store.Record) error {
	if v.n.sf.failure != nil {
		return errStopped
	}
	if v.n.pub.reads != nil {
		v.n.WithdrawRead(key)
	}
	return v.n.backing().Put(key, rec)
}

// backing is the node's store beneath the fail-stop gate.
func (n *node) backing() store.Store {
	f := n.sim.cfg.StoreFaults
	if f.ReadError == 0 && f.WriteError == 0 {
		return n.engine
	}
	if n.sf.faulty == nil {
		rng := rand.New(rand.NewPCG(n.sim.cfg.Seed, 0x73746f72<<16|uint64(n.id))) // "stor"
		n.sf.faulty = store.NewFaulty(n.engine, rng, f.ReadError, f.WriteError)
	}
	return n.sf.faulty
}

// crashStore loses the engine's unsynced writes, or all but a prefix of
// them under StoreFaults.TornCrash.
func (n *node) crashStore() {
	if !n.sim.cfg.StoreFaults.TornCrash {
		n.engine.Crash()
		return
	}
	if n.sf.torn == nil {
		n.sf.torn = rand.New(rand.NewPCG(n.sim.cfg.Seed, 0x746f726e<<16|uint64(n.id))) // "torn"
	}
	n.engine.CrashTorn(n.sf.torn)
}

// FailStop implements env.Env.
func (n *node) FailStop(cause error) {
	if n.sf.failure == nil {
		n.sf.failure = cause
	}
}

// failStop ends a handler that fail-stopped its node: the handler's
// messages and replies are dropped, the node crashes (losing unsynced
// writes, or keeping a torn prefix), the failure is recorded, and the node
// restarts after StoreFaults.RestartAfter unless something else restarts or
// crashes it first. A broken invariant goes to Config.OnViolation, or
// panics with the seed.
func (n *node) failStop() {
	s := n.sim
	f := Failure{At: s.now, Node: n.id, Err: n.sf.failure, step: s.steps}
	n.sf.fails = append(n.sf.fails, f)
	clear(n.outMsgs)
	n.outMsgs = n.outMsgs[:0]
	clear(n.outReps)
	n.outReps = n.outReps[:0]
	s.traceEvent(&event{at: s.now, node: n.id}, "fail-stop")
	s.Crash(n.id)
	n.sf.failure = nil
	if f.Violation() {
		if s.cfg.OnViolation == nil {
			panic(fmt.Sprintf("sim: %s (seed %d)", f, s.cfg.Seed))
		}
		s.cfg.OnViolation(f)
	}
	if d := s.cfg.StoreFaults.restartAfter(); d >= 0 {
		gen := n.gen
		s.After(d, func() {
			if n.gen == gen && !n.up {
				s.Restart(n.id)
			}
		})
	}
}
