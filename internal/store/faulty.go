package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// ErrInjected marks an error a Faulty store made up: an expected event of a
// simulated run, not a bug.
var ErrInjected = errors.New("store: injected fault")

// Faulty wraps a Store and fails its calls at random, the way a failing
// disk would (FoundationDB's buggify, for storage): each Get fails with
// probability ReadError, each Put with probability WriteError. Half of the
// failed Puts have taken effect anyway, because an error does not tell a
// caller its write is absent (Store). It draws only from its own source,
// so a seeded run replays exactly.
type Faulty struct {
	s   Store
	rng *rand.Rand
	// ReadError and WriteError are the probabilities in [0, 1] that a Get
	// or a Put fails.
	ReadError, WriteError float64
	// Reads and Writes count the failures injected so far.
	Reads, Writes int
}

// NewFaulty wraps s; rng drives the faults.
func NewFaulty(s Store, rng *rand.Rand, readError, writeError float64) *Faulty {
	return &Faulty{s: s, rng: rng, ReadError: readError, WriteError: writeError}
}

// Get implements Store.
func (f *Faulty) Get(key string) (Record, bool, error) {
	if f.ReadError > 0 && f.rng.Float64() < f.ReadError {
		f.Reads++
		return Record{}, false, fmt.Errorf("get %q: %w", key, ErrInjected)
	}
	return f.s.Get(key)
}

// Put implements Store.
func (f *Faulty) Put(key string, rec Record) error {
	if f.WriteError > 0 && f.rng.Float64() < f.WriteError {
		f.Writes++
		if f.rng.IntN(2) == 0 {
			if err := f.s.Put(key, rec); err != nil {
				return err
			}
		}
		return fmt.Errorf("put %q: %w", key, ErrInjected)
	}
	return f.s.Put(key, rec)
}
