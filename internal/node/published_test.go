package node

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// publishingNode is a node with PublishReads, driven by hand on the test's
// goroutine (no loop runs).
func publishingNode(t *testing.T, early bool, keyspaces []string) *Node {
	t.Helper()
	return newIdleNode(t, Config{EarlyReads: early, PublishReads: true, Keyspaces: keyspaces})
}

// flushBatch ends n's batch: with a reply to release, it syncs.
func flushBatch(t *testing.T, n *Node) {
	t.Helper()
	n.Reply(&wire.Reply{})
	if err := n.flush(); err != nil {
		t.Fatal(err)
	}
}

// TestPublishedReads: a published reply answers CachedRead at its level
// until the key is written (on either store a handler sees). With
// EarlyReads it is published at once if durable, and not at all if its
// handler read a key awaiting its sync; without, it waits for its batch's
// sync, and a write of the key first, or a batch whose output is dropped
// (a failed sync, a fail-stop), leaves it unpublished. A stop, or a store
// failure, forgets them all; CachedRead finds a named keyspace's keys,
// and escaped default-keyspace keys, under their store keys.
func TestPublishedReads(t *testing.T) {
	for _, early := range []bool{false, true} {
		n := publishingNode(t, early, []string{"default", "other"})
		get := func(ks, key string, l wire.Level) string {
			r, ok := n.CachedRead(ks, []byte(key), l)
			if !ok {
				return "-"
			}
			return string(r.Value)
		}
		// read is a fast-path read's handler: it reads key and replies
		// with (and publishes) what it read.
		read := func(key string) {
			n.touched = false
			rec, ok, err := n.Store().Get(key)
			if err != nil {
				t.Fatal(err)
			}
			rep := &wire.Reply{ID: 7, Client: 3, Found: ok, Value: rec.Value}
			n.ReplyRead(rep)
			n.PublishRead(key, wire.Quorum, rep, 0)
		}
		put := func(key, v string) {
			n.touched = false
			if err := n.Store().Put(key, store.Record{Value: []byte(v)}); err != nil {
				t.Fatal(err)
			}
		}
		flush := func() { flushBatch(t, n) }
		put("k", "v1")
		flush()
		read("k")
		flush()
		if got := get("", "k", wire.Quorum); got != "v1" {
			t.Fatalf("early=%v: CachedRead(k) = %s; want the published v1", early, got)
		}
		if got := get("default", "k", wire.Quorum); got != "v1" {
			t.Errorf("early=%v: CachedRead(default, k) = %s; want v1", early, got)
		}
		if got := get("", "k", wire.One); got != "-" {
			t.Errorf("early=%v: CachedRead at another level = %s; want none", early, got)
		}
		if r, _ := n.CachedRead("", []byte("k"), wire.Quorum); r.ID != 0 || r.Client != 0 {
			t.Errorf("early=%v: the published reply keeps request %d of client %d; want neither", early, r.ID, r.Client)
		}
		// A handler's write withdraws it.
		put("k", "v2")
		if got := get("", "k", wire.Quorum); got != "-" {
			t.Errorf("early=%v: after a Put CachedRead(k) = %s; want none", early, got)
		}
		// A read of the write not yet synced: with EarlyReads it is not
		// published; without, it is once the batch's sync succeeds.
		read("k")
		if got := get("", "k", wire.Quorum); got != "-" {
			t.Errorf("early=%v: a read of an unsynced write is published before the sync: %s", early, got)
		}
		flush()
		want := "v2"
		if early {
			want = "-"
		}
		if got := get("", "k", wire.Quorum); got != want {
			t.Errorf("early=%v: after the sync CachedRead(k) = %s; want %s", early, got, want)
		}
		// A write of the key after the read, in the same batch, publishes
		// nothing; without EarlyReads neither does a read in a batch whose
		// output is dropped (with, v4 is durable when read: published).
		put("k", "v3")
		read("k")
		put("k", "v4")
		flush()
		if got := get("", "k", wire.Quorum); got != "-" {
			t.Errorf("early=%v: CachedRead(k) = %s; want none (written after its read)", early, got)
		}
		read("k")
		n.dropOut()
		flush()
		want = "-"
		if early {
			want = "v4"
		}
		if got := get("", "k", wire.Quorum); got != want {
			t.Errorf("early=%v: CachedRead(k) after a dropped batch = %s; want %s", early, got, want)
		}
		// Store keys: a named keyspace's, and an escaped default key.
		put("k/other/x", "ox")
		put("k//y", "dy")
		flush()
		read("k/other/x")
		read("k//y")
		flush()
		if got := get("other", "x", wire.Quorum); got != "ox" {
			t.Errorf("early=%v: CachedRead(other, x) = %s; want ox", early, got)
		}
		if got := get("", "k/y", wire.Quorum); got != "dy" {
			t.Errorf("early=%v: CachedRead(k/y) = %s; want dy", early, got)
		}
		if got := get("nope", "x", wire.Quorum); got != "-" {
			t.Errorf("early=%v: CachedRead of an unknown keyspace = %s; want none", early, got)
		}
		// Errors are not published.
		n.PublishRead("e", wire.Quorum, &wire.Reply{Err: &wire.Error{Code: wire.ErrUnavailable}}, 0)
		flush()
		if got := get("", "e", wire.Quorum); got != "-" {
			t.Errorf("early=%v: an error reply was published", early)
		}
		// A store failure forgets them all.
		n.breakDown(errors.New("disk gone"))
		if got := get("other", "x", wire.Quorum); got != "-" {
			t.Errorf("early=%v: after the store failed CachedRead = %s; want none", early, got)
		}
	}
}

// TestPublishedReadsUntil: a reply published with an end (a lease's) is
// given until Now reaches it, and WithdrawRead withdraws a reply, and one
// still waiting for its batch's sync, whatever its end.
func TestPublishedReadsUntil(t *testing.T) {
	for _, early := range []bool{false, true} {
		clk := &fakeClock{}
		n := newIdleNode(t, Config{EarlyReads: early, PublishReads: true, Clock: clk})
		flush := func() { flushBatch(t, n) }
		cached := func(key string) bool {
			_, ok := n.CachedRead("", []byte(key), wire.One)
			return ok
		}
		n.PublishRead("k", wire.One, &wire.Reply{Found: true, Value: []byte("v")}, n.Now()+int64(time.Second))
		n.PublishRead("j", wire.One, &wire.Reply{Found: true, Value: []byte("w")}, 0)
		flush()
		if !cached("k") || !cached("j") {
			t.Fatalf("early=%v: published replies not given (k %v, j %v)", early, cached("k"), cached("j"))
		}
		clk.Advance(999 * time.Millisecond)
		if !cached("k") {
			t.Errorf("early=%v: a reply 1 ms before its end not given", early)
		}
		clk.Advance(time.Millisecond)
		if cached("k") {
			t.Errorf("early=%v: a reply given at its end", early)
		}
		if !cached("j") {
			t.Errorf("early=%v: a reply without an end not given after 1 s", early)
		}
		n.WithdrawRead("j")
		if cached("j") {
			t.Errorf("early=%v: a withdrawn reply still given", early)
		}
		// Withdrawn before its batch's sync: never published.
		n.PublishRead("i", wire.One, &wire.Reply{Found: true}, 0)
		n.WithdrawRead("i")
		flush()
		if cached("i") {
			t.Errorf("early=%v: a reply withdrawn in its own batch was published", early)
		}
	}
}

// TestPublishedReadsBounded: past maxPublished keys, or maxPublishedBytes
// of keys and values, the published replies are forgotten and publishing
// starts again; a value past maxPublishedValueBytes is not published.
func TestPublishedReadsBounded(t *testing.T) {
	n := publishingNode(t, false, nil)
	for i := range maxPublished + 10 {
		n.publish(fmt.Sprintf("%08d", i), &published{level: wire.Quorum, rep: wire.Reply{Found: true, Value: []byte("v")}})
	}
	if len(n.reads) > maxPublished || len(n.reads) == 0 {
		t.Errorf("%d published replies; want between 1 and %d", len(n.reads), maxPublished)
	}
	if n.readBytes != 9*len(n.reads) {
		t.Errorf("readBytes %d; want %d (8 key bytes and one value byte each)", n.readBytes, 9*len(n.reads))
	}
	// Keys count: 600 absent keys of 64 KiB pass the byte bound.
	for i := range 600 {
		n.publish(fmt.Sprintf("%065536d", i), &published{level: wire.Quorum})
	}
	if n.readBytes > maxPublishedBytes {
		t.Errorf("readBytes %d past the bound %d", n.readBytes, maxPublishedBytes)
	}
	n.PublishRead("big", wire.Quorum, &wire.Reply{Found: true, Value: make([]byte, maxPublishedValueBytes+1)}, 0)
	flushBatch(t, n)
	if _, ok := n.CachedRead("", []byte("big"), wire.Quorum); ok {
		t.Error("a value past maxPublishedValueBytes was published")
	}
}

// TestTeethPublishedReadsWithdraw: a quorum keyspace on a running node;
// a GET publishes the key's record, and a SET of the key, once answered,
// leaves CachedRead with the new value or none. A node that kept published
// replies across writes answers the old value (teeth).
func TestTeethPublishedReadsWithdraw(t *testing.T) {
	for _, keep := range []bool{false, true} {
		tp := oneNodeWorld(t)
		ks, err := quorum.NewKeyspace(tp, quorum.Config{})
		if err != nil {
			t.Fatal(err)
		}
		n, err := New(Config{Topology: tp, Factory: ks.Factory(), Engine: store.NewMem(), PublishReads: true})
		if err != nil {
			t.Fatal(err)
		}
		n.unsafeKeepPublished = keep
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- n.Run(ctx) }()
		id := wire.RequestID(0)
		call := func(op wire.Op, v string) *wire.Reply {
			id++
			ch := make(chan *wire.Reply, 1)
			n.Submit(&wire.Request{ID: id, Client: 1, Op: op, Key: "k", Value: []byte(v)}, func(r *wire.Reply) { ch <- r })
			r := <-ch
			if r.Err != nil {
				t.Fatalf("%v: %v", op, r.Err)
			}
			return r
		}
		call(wire.OpPut, "v1")
		if r := call(wire.OpGet, ""); string(r.Value) != "v1" {
			t.Fatalf("GET = %q; want v1", r.Value)
		}
		if r, ok := n.CachedRead("", []byte("k"), wire.LevelDefault); !ok || string(r.Value) != "v1" {
			t.Fatalf("keep=%v: nothing published after a GET (%v, %v)", keep, r, ok)
		}
		call(wire.OpPut, "v2")
		r, ok := n.CachedRead("", []byte("k"), wire.LevelDefault)
		stale := ok && string(r.Value) != "v2"
		if !keep && stale {
			t.Errorf("after SET v2 was answered CachedRead = %q; want v2 or none", r.Value)
		}
		if keep && !stale {
			t.Errorf("teeth: a node keeping published replies across writes still answered %v, %v; want the stale v1", r, ok)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
