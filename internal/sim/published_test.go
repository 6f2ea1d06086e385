package sim

import (
	"log/slog"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// publisher is a store that publishes every read: a GET of a key
// starting "e" with an end 5ms ahead, of "slow" only after a 10ms timer
// (so it stays in flight), and an OpDelete withdraws the key instead of
// writing it.
type publisher struct{}

func (publisher) Start(env.Env)                       {}
func (publisher) Step(env.Env, wire.NodeID, wire.Msg) {}
func (publisher) Request(e env.Env, req *wire.Request) {
	switch req.Op {
	case wire.OpPut:
		_ = e.Store().Put(req.Key, store.Record{Value: req.Value})
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client})
	case wire.OpDelete:
		env.WithdrawRead(e, req.Key)
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client})
	case wire.OpGet:
		if req.Key == "slow" {
			e.SetTimer(10*time.Millisecond, req)
			return
		}
		rec, ok, _ := e.Store().Get(req.Key)
		rep := &wire.Reply{ID: req.ID, Client: req.Client, Found: ok, Value: rec.Value}
		e.Reply(rep)
		until := int64(0)
		if req.Key[0] == 'e' {
			until = e.Now() + int64(5*time.Millisecond)
		}
		env.PublishRead(e, req.Key, req.Level, rep, until)
	}
}
func (publisher) Timer(e env.Env, p any) {
	req := p.(*wire.Request)
	e.Reply(&wire.Reply{ID: req.ID, Client: req.Client})
}

// TestPublishedReads: with PublishReads, a read is answered from its
// gateway's published reply until a write of the key, a WithdrawRead or
// the reply's end; never for a client with a request still unanswered;
// and a crash forgets the replies and the requests its node was handling,
// so that client's reads are answered so again after the restart.
func TestPublishedReads(t *testing.T) {
	replies := map[wire.RequestID]*wire.Reply{}
	var s *Sim
	s = New(Config{Seed: 1, Topology: testWorld(t), Log: slog.New(slog.DiscardHandler), PublishReads: true,
		Factory: func(wire.NodeID) env.Replica { return publisher{} },
		OnReply: func(r *wire.Reply) { replies[r.ID] = r }})
	id := wire.RequestID(0)
	// do sends one request from client c to node 0 and runs 50ms; it
	// returns the reply and whether a published reply answered it.
	do := func(c wire.ClientID, op wire.Op, key, v string) (*wire.Reply, bool) {
		id++
		before := s.PublishedReadsServed()
		s.Request(0, &wire.Request{ID: id, Client: c, Op: op, Key: key, Value: []byte(v)})
		s.Run(s.Now() + int64(50*time.Millisecond))
		return replies[id], s.PublishedReadsServed() > before
	}
	do(1, wire.OpPut, "k", "v1")
	if _, cached := do(1, wire.OpGet, "k", ""); cached {
		t.Fatal("the first read was answered from a published reply")
	}
	if r, cached := do(1, wire.OpGet, "k", ""); !cached || string(r.Value) != "v1" {
		t.Fatalf("second read: %+v, published %v; want v1 from the published reply", r, cached)
	}
	do(2, wire.OpPut, "k", "v2")
	if r, cached := do(1, wire.OpGet, "k", ""); cached || string(r.Value) != "v2" {
		t.Fatalf("read after a write: %+v, published %v; want v2 from the replica", r, cached)
	}
	do(1, wire.OpDelete, "k", "")
	if _, cached := do(1, wire.OpGet, "k", ""); cached {
		t.Fatal("a withdrawn reply answered a read")
	}
	// An end: given before it, not after (do runs 50ms past the 5ms end).
	do(1, wire.OpGet, "e", "")
	if _, cached := do(1, wire.OpGet, "e", ""); cached {
		t.Fatal("a reply past its end answered a read")
	}
	// A client with a request in flight reads through the replica.
	do(1, wire.OpGet, "k", "")
	id++
	s.Request(0, &wire.Request{ID: id, Client: 3, Op: wire.OpGet, Key: "slow"})
	if _, cached := do(3, wire.OpGet, "k", ""); cached {
		t.Fatal("a read answered from a published reply while the client's earlier request was in flight")
	}
	// A crash forgets the replies, and client 4's request in flight.
	id++
	s.Request(0, &wire.Request{ID: id, Client: 4, Op: wire.OpGet, Key: "slow"})
	s.Run(s.Now() + int64(time.Millisecond))
	s.Crash(0)
	s.Restart(0)
	if _, cached := do(1, wire.OpGet, "k", ""); cached {
		t.Fatal("a reply published before a crash answered a read after it")
	}
	if r, cached := do(4, wire.OpGet, "k", ""); !cached || string(r.Value) != "v2" {
		t.Fatalf("after the crash, client 4's read: %+v, published %v; want v2 from the published reply (its lost request forgotten)", r, cached)
	}
}
