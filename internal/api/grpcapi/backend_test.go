package grpcapi

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/wire"
)

// fakeBackend is an in-memory api.Backend. Like a node, it replies from its
// own goroutine (the "loop"), never from inside Submit. Keys named in errs
// fail with that error; keys named in hold are answered only once their
// channel is closed, from another goroutine, so that a reply can arrive
// after the call that asked for it is gone.
type fakeBackend struct {
	t       *testing.T
	calls   chan fakeCall
	clients atomic.Int64
	fired   atomic.Int64 // done calls made

	mu          sync.Mutex
	data        map[string]fakeEntry // keyspace + "/" + key
	wall        int64                // the fake clock: +1 per write
	levels      []wire.Level         // level of every request, in arrival order
	updates     []wire.UpdateMode    // update mode of every request, in arrival order
	clientIDs   map[wire.ClientID]bool
	outstanding map[[2]int64]bool // (client, id) submitted and not yet answered
	errs        map[string]*wire.Error
	hold        map[string]chan struct{}
	received    chan string // if set, gets each request's key on arrival
}

type fakeCall struct {
	req  *wire.Request
	done func(*wire.Reply)
}

type fakeEntry struct {
	found   bool
	value   []byte
	version wire.Version
}

func newFakeBackend(t *testing.T) *fakeBackend {
	b := &fakeBackend{
		t:           t,
		calls:       make(chan fakeCall, 4096),
		data:        make(map[string]fakeEntry),
		clientIDs:   make(map[wire.ClientID]bool),
		outstanding: make(map[[2]int64]bool),
		errs:        make(map[string]*wire.Error),
		hold:        make(map[string]chan struct{}),
	}
	stop := make(chan struct{})
	loopDone := make(chan struct{})
	go b.loop(stop, loopDone)
	t.Cleanup(func() { close(stop); <-loopDone })
	return b
}

func (b *fakeBackend) NewClientID() wire.ClientID { return wire.ClientID(b.clients.Add(1)) }

func (b *fakeBackend) Submit(req *wire.Request, done func(*wire.Reply)) {
	b.mu.Lock()
	k := [2]int64{int64(req.Client), int64(req.ID)}
	if b.outstanding[k] {
		b.t.Errorf("Submit: client %d request %d is already outstanding", req.Client, req.ID)
	}
	b.outstanding[k] = true
	b.clientIDs[req.Client] = true
	b.levels = append(b.levels, req.Level)
	b.updates = append(b.updates, req.Update)
	b.mu.Unlock()
	b.calls <- fakeCall{req, done}
}

func (b *fakeBackend) loop(stop, loopDone chan struct{}) {
	defer close(loopDone)
	for {
		select {
		case <-stop:
			return
		case c := <-b.calls:
			b.mu.Lock()
			h := b.hold[c.req.Key]
			rc := b.received
			b.mu.Unlock()
			if rc != nil {
				rc <- c.req.Key
			}
			if h != nil {
				go func() { <-h; b.answer(c) }()
				continue
			}
			b.answer(c)
		}
	}
}

func (b *fakeBackend) answer(c fakeCall) {
	req := c.req
	r := &wire.Reply{ID: req.ID, Client: req.Client}
	b.mu.Lock()
	delete(b.outstanding, [2]int64{int64(req.Client), int64(req.ID)})
	if e := b.errs[req.Key]; e != nil {
		r.Err = e
	} else {
		k := req.Keyspace + "/" + req.Key
		switch req.Op {
		case wire.OpGet:
			e := b.data[k]
			r.Found, r.Value, r.Version = e.found, e.value, e.version
		case wire.OpPut, wire.OpDelete:
			if e, ok := b.data[k]; req.Cond && !req.Expected.Holds(e.version, ok, !e.found) {
				r.Version, r.Err = e.version, &wire.Error{Code: wire.ErrConflict, Msg: "fake: another version"}
				break
			}
			b.wall++
			v := wire.Version{TS: hlc.Timestamp{WallNanos: b.wall, Logical: uint32(b.wall % 3)}, Node: 7}
			b.data[k] = fakeEntry{found: req.Op == wire.OpPut, value: req.Value, version: v}
			r.Version = v
		case wire.OpMigrate:
			r.Value = append([]byte("moved-to-"), req.Value...)
		}
	}
	b.mu.Unlock()
	c.done(r)
	b.fired.Add(1)
}

func (b *fakeBackend) lastUpdate() wire.UpdateMode {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.updates[len(b.updates)-1]
}

func (b *fakeBackend) lastLevel() wire.Level {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.levels[len(b.levels)-1]
}

func (b *fakeBackend) setErr(key string, e *wire.Error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errs[key] = e
}

func (b *fakeBackend) holdKey(key string) chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch := make(chan struct{})
	b.hold[key] = ch
	return ch
}

// requests counts the requests submitted so far.
func (b *fakeBackend) requests() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.levels)
}
