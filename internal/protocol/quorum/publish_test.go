package quorum

import (
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// pubEnv is a fakeEnv that records what the replica publishes.
type pubEnv struct {
	*fakeEnv
	pubs map[string]*wire.Reply
}

func (p *pubEnv) PublishRead(key string, _ wire.Level, r *wire.Reply, _ int64) bool {
	p.pubs[key] = r
	return true
}
func (p *pubEnv) WithdrawRead(key string) { delete(p.pubs, key) }

// TestPublishOnlyPastTheWaitCap: under a measured commit wait below its
// 2δ cap, a fast-path read answers a version older than the wait at once,
// but publishes it only once it is older than 2δ, since the wait may grow
// back to 2δ later; an absence is published at once. Without the age
// check the first read below would publish a version a later fast-path
// read would decline.
func TestPublishOnlyPastTheWaitCap(t *testing.T) {
	tp := threeRegions(t)
	ks, err := NewKeyspace(tp, Config{CommitWait: CommitWaitMeasured, Read: wire.One})
	if err != nil {
		t.Fatal(err)
	}
	e := &pubEnv{newFakeEnv(t, 0, tp), map[string]*wire.Reply{}}
	r := newReplica(ks, 0)
	r.Start(e)
	ms := int64(time.Millisecond)
	r.Step(e, 1, &Clock{Wall: e.now - ms, Epoch: 1})
	r.Step(e, 2, &Clock{Wall: e.now - 3*ms/2, Epoch: 1})
	if w, cap := r.commitWait(e), ks.commitWaitNs; w >= cap || w != 3*ms/2 {
		t.Fatalf("measured wait %d, cap %d; want 1.5ms, below the cap", w, cap)
	}
	put := func(key string, age int64) {
		rec := store.Record{Value: []byte("v"), Version: wire.Version{TS: hlc.Timestamp{WallNanos: e.now - age}, Node: 1}}
		if err := e.st.Put(key, rec); err != nil {
			t.Fatal(err)
		}
	}
	put("young", 2*ms)             // past the measured wait, within 2δ
	put("old", ks.commitWaitNs+ms) // past 2δ
	for i, key := range []string{"young", "old", "absent"} {
		e.replies = nil
		r.Request(e, &wire.Request{ID: wire.RequestID(i + 1), Client: 9, Op: wire.OpGet, Key: key, Level: wire.One})
		if len(e.replies) != 1 || e.replies[0].Err != nil {
			t.Fatalf("GET %s: replies %+v; want one answer at once (the fast path)", key, e.replies)
		}
	}
	if _, ok := e.pubs["young"]; ok {
		t.Error("a version younger than 2δ was published; a later read under a grown wait would decline it")
	}
	if p, ok := e.pubs["old"]; !ok || string(p.Value) != "v" {
		t.Errorf("the version older than 2δ was not published (%v)", p)
	}
	if p, ok := e.pubs["absent"]; !ok || p.Found {
		t.Errorf("the absent key's answer was not published as an absence (%v)", p)
	}
}
