package svchost

import (
	"context"
	"testing"

	"github.com/lightcone/lightcone/internal/storagesvc"
)

// TestPrefixed: a prefixed view stores under its prefix, reads and lists
// its own keys without it, and leaves the rest of the service alone.
func TestPrefixed(t *testing.T) {
	ctx := context.Background()
	base := storagesvc.NewMem(0)
	if _, err := base.Put(ctx, "k", []byte("base"), nil, storagesvc.Cond{}); err != nil {
		t.Fatal(err)
	}
	p := &prefixed{svc: base, prefix: "replica-1/"}
	if _, err := p.Get(ctx, "k"); err != storagesvc.ErrNotFound {
		t.Fatalf("Get(k) through the prefix = %v; want not found", err)
	}
	e, err := p.Put(ctx, "k", []byte("rep"), storagesvc.Meta{"m": "1"}, storagesvc.Cond{IfNoneMatch: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.PutMeta(ctx, "k", storagesvc.Meta{"m": "2"}, storagesvc.Cond{IfMatch: e}); err != nil {
		t.Fatal(err)
	}
	o, err := p.Get(ctx, "k")
	if err != nil || string(o.Data) != "rep" || o.Meta["m"] != "2" || o.Key != "k" {
		t.Fatalf("Get(k) = %+v, %v; want rep with m=2 under key k", o, err)
	}
	if h, err := p.Head(ctx, "k"); err != nil || h.Key != "k" {
		t.Fatalf("Head(k) = %+v, %v", h, err)
	}
	l, err := p.List(ctx, "", "", 0)
	if err != nil || len(l.Entries) != 1 || l.Entries[0].Key != "k" {
		t.Fatalf("List = %+v, %v; want k alone", l, err)
	}
	if l, _ := p.List(ctx, "", "k", 0); len(l.Entries) != 0 {
		t.Fatalf("List after k = %+v; want nothing", l)
	}
	if o, _ := base.Get(ctx, "k"); string(o.Data) != "base" {
		t.Fatalf("the base object is %q; want base", o.Data)
	}
	if err := p.Delete(ctx, "k", storagesvc.Cond{}); err != nil {
		t.Fatal(err)
	}
	if base.Len() != 1 {
		t.Fatalf("base holds %d objects after the delete; want 1", base.Len())
	}
}
