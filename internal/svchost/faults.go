package svchost

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/lightcone/lightcone/internal/storagesvc"
)

// Faults makes a region's storage service misbehave on purpose, for tests
// and demos (the server takes it only with fault_injection). Each request
// draws independently; every fault is one a real store shows, and each
// leaves the outcome as storagesvc's ErrUnavailable says: unknown.
type Faults struct {
	// Error is the probability that a request is refused at once with
	// ErrUnavailable (a 503), without reaching the service.
	Error float64 `yaml:"error"`
	// Timeout is the probability that a request hangs until its timeout
	// (Backend.Timeout) without reaching the service, then answers
	// ErrUnavailable.
	Timeout float64 `yaml:"timeout"`
	// LoseAnswer is the probability that a write (put, put_meta, delete)
	// takes effect but its answer is lost: the caller gets ErrUnavailable,
	// as after a reset connection.
	LoseAnswer float64 `yaml:"lose_answer"`
}

// Validate checks that every probability is in [0, 1].
func (f *Faults) Validate() error {
	for _, p := range []struct {
		name string
		v    float64
	}{{"error", f.Error}, {"timeout", f.Timeout}, {"lose_answer", f.LoseAnswer}} {
		if p.v < 0 || p.v > 1 {
			return fmt.Errorf("faults.%s = %v; must be a probability, 0 to 1", p.name, p.v)
		}
	}
	return nil
}

// faulty is a service with Faults injected.
type faulty struct {
	svc storagesvc.Service
	f   Faults
	mu  sync.Mutex
	rng *rand.Rand
}

func (s *faulty) draw(p float64) bool {
	if p == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Float64() < p
}

var (
	errInjected     = fmt.Errorf("%w: svchost: injected error", storagesvc.ErrUnavailable)
	errInjectedHang = fmt.Errorf("%w: svchost: injected timeout", storagesvc.ErrUnavailable)
	errAnswerLost   = fmt.Errorf("%w: svchost: injected loss of the answer", storagesvc.ErrUnavailable)
)

// before injects the faults that keep a request from the service.
func (s *faulty) before(ctx context.Context) error {
	if s.draw(s.f.Error) {
		return errInjected
	}
	if s.draw(s.f.Timeout) {
		<-ctx.Done()
		return errInjectedHang
	}
	return nil
}

// after loses a write's answer.
func (s *faulty) after(err error) error {
	if s.draw(s.f.LoseAnswer) {
		return errAnswerLost
	}
	return err
}

func (s *faulty) Get(ctx context.Context, key string) (*storagesvc.Object, error) {
	if err := s.before(ctx); err != nil {
		return nil, err
	}
	return s.svc.Get(ctx, key)
}

func (s *faulty) Head(ctx context.Context, key string) (*storagesvc.Object, error) {
	if err := s.before(ctx); err != nil {
		return nil, err
	}
	return s.svc.Head(ctx, key)
}

func (s *faulty) List(ctx context.Context, prefix, startAfter string, limit int) (*storagesvc.ListResult, error) {
	if err := s.before(ctx); err != nil {
		return nil, err
	}
	return s.svc.List(ctx, prefix, startAfter, limit)
}

func (s *faulty) Put(ctx context.Context, key string, data []byte, meta storagesvc.Meta, cond storagesvc.Cond) (storagesvc.ETag, error) {
	if err := s.before(ctx); err != nil {
		return "", err
	}
	e, err := s.svc.Put(ctx, key, data, meta, cond)
	if err = s.after(err); err != nil {
		return "", err
	}
	return e, nil
}

func (s *faulty) PutMeta(ctx context.Context, key string, meta storagesvc.Meta, cond storagesvc.Cond) (storagesvc.ETag, error) {
	if err := s.before(ctx); err != nil {
		return "", err
	}
	e, err := s.svc.PutMeta(ctx, key, meta, cond)
	if err = s.after(err); err != nil {
		return "", err
	}
	return e, nil
}

func (s *faulty) Delete(ctx context.Context, key string, cond storagesvc.Cond) error {
	if err := s.before(ctx); err != nil {
		return err
	}
	return s.after(s.svc.Delete(ctx, key, cond))
}

var _ storagesvc.Service = (*faulty)(nil)
