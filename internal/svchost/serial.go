package svchost

import (
	"context"
	"sync"

	"github.com/lightcone/lightcone/internal/storagesvc"
)

// Serial makes a service that is not safe for concurrent use (storagesvc.Mem)
// safe, by running its calls one at a time: each takes effect atomically,
// in the order the calls take the lock.
type Serial struct {
	mu  sync.Mutex
	svc storagesvc.Service
}

// NewSerial wraps svc.
func NewSerial(svc storagesvc.Service) *Serial { return &Serial{svc: svc} }

// Do runs f with the service, alone.
func (s *Serial) Do(f func(storagesvc.Service)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.svc)
}

func (s *Serial) Get(ctx context.Context, key string) (o *storagesvc.Object, err error) {
	s.Do(func(v storagesvc.Service) { o, err = v.Get(ctx, key) })
	return
}

func (s *Serial) Head(ctx context.Context, key string) (o *storagesvc.Object, err error) {
	s.Do(func(v storagesvc.Service) { o, err = v.Head(ctx, key) })
	return
}

func (s *Serial) Put(ctx context.Context, key string, data []byte, meta storagesvc.Meta, cond storagesvc.Cond) (e storagesvc.ETag, err error) {
	s.Do(func(v storagesvc.Service) { e, err = v.Put(ctx, key, data, meta, cond) })
	return
}

func (s *Serial) PutMeta(ctx context.Context, key string, meta storagesvc.Meta, cond storagesvc.Cond) (e storagesvc.ETag, err error) {
	s.Do(func(v storagesvc.Service) { e, err = v.PutMeta(ctx, key, meta, cond) })
	return
}

func (s *Serial) List(ctx context.Context, prefix, startAfter string, limit int) (l *storagesvc.ListResult, err error) {
	s.Do(func(v storagesvc.Service) { l, err = v.List(ctx, prefix, startAfter, limit) })
	return
}

func (s *Serial) Delete(ctx context.Context, key string, cond storagesvc.Cond) (err error) {
	s.Do(func(v storagesvc.Service) { err = v.Delete(ctx, key, cond) })
	return
}

var _ storagesvc.Service = (*Serial)(nil)
