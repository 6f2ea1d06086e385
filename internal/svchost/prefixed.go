package svchost

import (
	"context"
	"strings"

	"github.com/lightcone/lightcone/internal/storagesvc"
)

// prefixed is a service's objects under a key prefix, as a service of its
// own: how an s3 backend serves a region's further replicas
// (wire.StorageReplica) from the region's one bucket.
type prefixed struct {
	svc    storagesvc.Service
	prefix string
}

func (p *prefixed) Get(ctx context.Context, key string) (*storagesvc.Object, error) {
	o, err := p.svc.Get(ctx, p.prefix+key)
	if o != nil {
		o.Key = key
	}
	return o, err
}

func (p *prefixed) Head(ctx context.Context, key string) (*storagesvc.Object, error) {
	o, err := p.svc.Head(ctx, p.prefix+key)
	if o != nil {
		o.Key = key
	}
	return o, err
}

func (p *prefixed) Put(ctx context.Context, key string, data []byte, meta storagesvc.Meta, cond storagesvc.Cond) (storagesvc.ETag, error) {
	return p.svc.Put(ctx, p.prefix+key, data, meta, cond)
}

func (p *prefixed) PutMeta(ctx context.Context, key string, meta storagesvc.Meta, cond storagesvc.Cond) (storagesvc.ETag, error) {
	return p.svc.PutMeta(ctx, p.prefix+key, meta, cond)
}

func (p *prefixed) List(ctx context.Context, prefix, startAfter string, limit int) (*storagesvc.ListResult, error) {
	if startAfter != "" {
		startAfter = p.prefix + startAfter
	}
	l, err := p.svc.List(ctx, p.prefix+prefix, startAfter, limit)
	if l != nil {
		for i := range l.Entries {
			l.Entries[i].Key = strings.TrimPrefix(l.Entries[i].Key, p.prefix)
		}
	}
	return l, err
}

func (p *prefixed) Delete(ctx context.Context, key string, cond storagesvc.Cond) error {
	return p.svc.Delete(ctx, p.prefix+key, cond)
}
