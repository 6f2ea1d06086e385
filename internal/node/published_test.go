package node

import (
	"errors"
	"testing"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// publishingNode is a node with PublishReads, driven by hand on the test's
// goroutine (no loop runs).
func publishingNode(t *testing.T, early bool, keyspaces []string) *Node {
	t.Helper()
	w, err := topo.Parse([]byte("name: one\nnodes_per_region: 1\nregions: [{name: r}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(Config{Topology: topo.NewTopology(w), Factory: func(wire.NodeID) env.Replica { return &timerReplica{} },
		Engine: store.NewMem(), EarlyReads: early, PublishReads: true, Keyspaces: keyspaces})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPublishedReads: a published reply answers CachedRead at its level
// until the key is written (on either store a handler sees), and not one
// whose handler read a key awaiting its sync; a stop, or a store failure,
// forgets them all; CachedRead finds a named keyspace's keys, and escaped
// default-keyspace keys, under their store keys.
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
		n.touched = false
		n.PublishRead("k", wire.Quorum, &wire.Reply{ID: 7, Client: 3, Found: true, Value: []byte("v1")})
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
		if err := n.Store().Put("k", store.Record{Value: []byte("v2")}); err != nil {
			t.Fatal(err)
		}
		if got := get("", "k", wire.Quorum); got != "-" {
			t.Errorf("early=%v: after a Put CachedRead(k) = %s; want none", early, got)
		}
		// A read of a key awaiting its sync (EarlyReads: the handler
		// touched it) is not published.
		n.touched = false
		if _, _, err := n.Store().Get("k"); err != nil {
			t.Fatal(err)
		}
		n.PublishRead("k", wire.Quorum, &wire.Reply{Found: true, Value: []byte("v2")})
		want := "v2"
		if early {
			want = "-"
		}
		if got := get("", "k", wire.Quorum); got != want {
			t.Errorf("early=%v: a read of an unsynced write published %s; want %s", early, got, want)
		}
		// Store keys: a named keyspace's, and an escaped default key.
		n.touched = false
		n.PublishRead("k/other/x", wire.Quorum, &wire.Reply{Found: true, Value: []byte("ox")})
		n.PublishRead("k//y", wire.Quorum, &wire.Reply{Found: true, Value: []byte("dy")})
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
		n.PublishRead("e", wire.Quorum, &wire.Reply{Err: &wire.Error{Code: wire.ErrUnavailable}})
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

// TestPublishedReadsBounded: past maxPublished keys the published replies
// are forgotten and publishing starts again.
func TestPublishedReadsBounded(t *testing.T) {
	n := publishingNode(t, false, nil)
	for i := range maxPublished + 10 {
		n.PublishRead(string(rune('a'+i%26))+string(rune(i)), wire.Quorum, &wire.Reply{Found: true, Value: []byte("v")})
	}
	if len(n.reads) > maxPublished || len(n.reads) == 0 {
		t.Errorf("%d published replies; want between 1 and %d", len(n.reads), maxPublished)
	}
	if n.readBytes != len(n.reads) {
		t.Errorf("readBytes %d; want %d (one byte each)", n.readBytes, len(n.reads))
	}
	n.PublishRead("big", wire.Quorum, &wire.Reply{Found: true, Value: make([]byte, maxPublishedValue+1)})
	if _, ok := n.CachedRead("", []byte("big"), wire.Quorum); ok {
		t.Error("a value past maxPublishedValue was published")
	}
}
