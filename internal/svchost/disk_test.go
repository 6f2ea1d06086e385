package svchost_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/svchost"
	"github.com/lightcone/lightcone/internal/svctest"
)

// TestDiskConformance runs the conformance suite on the durable hosted
// service.
func TestDiskConformance(t *testing.T) {
	d, err := svchost.OpenDisk(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	svctest.Run(t, d, "disk")
}

// TestDiskRestart: what a hosted service acknowledged is there after it
// reopens its store, with the same ETags, so an If-Match on a state read
// before the restart still succeeds; an ETag is never given twice, before
// or after; deletes stay deleted.
func TestDiskRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := svchost.OpenDisk(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[storagesvc.ETag]bool{}
	fresh := func(e storagesvc.ETag, err error) storagesvc.ETag {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if seen[e] {
			t.Fatalf("ETag %s given twice", e)
		}
		seen[e] = true
		return e
	}
	ek := fresh(d.Put(ctx, "k", []byte("v1"), storagesvc.Meta{"b": "1"}, storagesvc.Cond{IfNoneMatch: true}))
	fresh(d.Put(ctx, "gone", []byte("x"), nil, storagesvc.Cond{}))
	if err := d.Delete(ctx, "gone", storagesvc.Cond{}); err != nil {
		t.Fatal(err)
	}
	epoch := d.Epoch()
	// Close without any shutdown work: every acknowledged write was
	// already fsynced (a kill -9 of the host is the server test's).
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d, err = svchost.OpenDisk(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Epoch() != epoch+1 {
		t.Fatalf("epoch after a restart = %d; want %d", d.Epoch(), epoch+1)
	}
	o, err := d.Get(ctx, "k")
	if err != nil || string(o.Data) != "v1" || o.Meta["b"] != "1" || o.ETag != ek {
		t.Fatalf("Get(k) after a restart = %+v, %v; want v1, b=1, ETag %s", o, err, ek)
	}
	if _, err := d.Get(ctx, "gone"); !errors.Is(err, storagesvc.ErrNotFound) {
		t.Fatalf("Get(gone) after a restart = %v; want not found", err)
	}
	if _, err := d.Put(ctx, "k", nil, nil, storagesvc.Cond{IfNoneMatch: true}); !errors.Is(err, storagesvc.ErrPreconditionFailed) {
		t.Fatalf("create-only Put(k) after a restart = %v; want precondition failed", err)
	}
	ek2 := fresh(d.PutMeta(ctx, "k", storagesvc.Meta{"b": "2"}, storagesvc.Cond{IfMatch: ek}))
	fresh(d.Put(ctx, "gone", []byte("y"), nil, storagesvc.Cond{IfNoneMatch: true}))
	if _, err := d.PutMeta(ctx, "k", storagesvc.Meta{"b": "3"}, storagesvc.Cond{IfMatch: ek}); !errors.Is(err, storagesvc.ErrPreconditionFailed) {
		t.Fatalf("PutMeta on the pre-restart ETag after a change = %v; want precondition failed", err)
	}
	if o, _ := d.Get(ctx, "k"); o.ETag != ek2 || string(o.Data) != "v1" {
		t.Fatalf("Get(k) = %+v; want v1 at %s", o, ek2)
	}
}
