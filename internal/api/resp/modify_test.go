package resp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/wire"
)

// interleave makes the fake backend run write, once, just before the first
// conditional write of key: another client's write landing between a
// read-modify-write command's read and its write.
func interleave(ts *testServer, key string, write func(data map[string]fakeRecord, k string)) {
	var once sync.Once
	ts.b.setFail(func(r *wire.Request) *wire.Error {
		if r.Key == key && r.Cond {
			once.Do(func() { write(ts.b.data, r.Keyspace+"\x00"+key) }) // on the loop, like any request
		}
		return nil
	})
}

// TestModifyRetriesOnConflict: a write between INCR's read and its write
// makes the conditional write fail; INCR reads again and counts from the
// new value, instead of overwriting it with the old value plus one.
func TestModifyRetriesOnConflict(t *testing.T) {
	ts := startServer(t, Config{})
	rdb := ts.client(t, nil)
	ctx := context.Background()
	interleave(ts, "n", func(data map[string]fakeRecord, k string) {
		data[k] = fakeRecord{val: []byte("10"), ver: wire.Version{Node: 9}}
	})
	if got, err := rdb.Incr(ctx, "n").Result(); err != nil || got != 11 {
		t.Fatalf("INCR with a write landing between its read and write = %d, %v; want 11 (the other write counted)", got, err)
	}
	conds := 0
	for _, r := range ts.b.requests() {
		if r.Cond {
			conds++
		}
	}
	if conds != 2 {
		t.Errorf("INCR sent %d conditional writes; want 2 (one conflict, one retry)", conds)
	}
}

// TestModifyLastWriterWins: a keyspace opted in to last-writer-wins
// read-modify-write gets plain puts, and so loses the write that landed
// between INCR's read and write: the opt-in is what it says.
func TestModifyLastWriterWins(t *testing.T) {
	ts := startServer(t, Config{LastWriterWins: func(ks string) bool { return ks == "lww" }})
	rdb := ts.client(t, &redis.Options{OnConnect: func(ctx context.Context, cn *redis.Conn) error {
		return cn.Do(ctx, "LC.KEYSPACE", "lww").Err()
	}})
	ctx := context.Background()
	var once sync.Once
	ts.b.setFail(func(r *wire.Request) *wire.Error {
		if r.Key == "n" && r.Op == wire.OpPut {
			if r.Cond {
				t.Errorf("a last-writer-wins keyspace sent a conditional write")
			}
			once.Do(func() { ts.b.data[r.Keyspace+"\x00n"] = fakeRecord{val: []byte("10")} })
		}
		return nil
	})
	if got, err := rdb.Incr(ctx, "n").Result(); err != nil || got != 1 {
		t.Fatalf("INCR = %d, %v; want 1 (get-then-put overwrites the other write)", got, err)
	}
}

// incrFailingConds runs INCR with every conditional write failing with e,
// and returns INCR's error.
func incrFailingConds(t *testing.T, ts *testServer, e *wire.Error) error {
	ts.b.setFail(func(r *wire.Request) *wire.Error {
		if r.Cond {
			return e
		}
		return nil
	})
	return ts.client(t, nil).Incr(context.Background(), "n").Err()
}

// TestModifyGivesUp: a command that loses the race every time stops after
// modifyTries attempts with an error saying so, having written nothing.
func TestModifyGivesUp(t *testing.T) {
	ts := startServer(t, Config{})
	err := incrFailingConds(t, ts, &wire.Error{Code: wire.ErrConflict, Msg: "always"})
	if err == nil || !strings.HasPrefix(err.Error(), "ERR "+msgContended) || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("INCR losing every race: err = %v; want ERR %s ... nothing was written", err, msgContended)
	}
	if n := len(ts.b.requests()); n != 2*modifyTries {
		t.Errorf("%d requests; want %d (a read and a write per attempt)", n, 2*modifyTries)
	}
}

// TestModifyRefused: a keyspace that cannot apply conditional writes
// refuses them with ErrInvalid, and the command replies that refusal.
func TestModifyRefused(t *testing.T) {
	ts := startServer(t, Config{})
	err := incrFailingConds(t, ts, &wire.Error{Code: wire.ErrInvalid, Msg: "meteor: this keyspace cannot apply conditional writes"})
	if err == nil || err.Error() != "ERR meteor: this keyspace cannot apply conditional writes" {
		t.Fatalf("INCR in a keyspace refusing conditional writes: err = %v; want the refusal", err)
	}
}

// TestGoRedisSetNXRace: many go-redis clients race SET NX on one key:
// exactly one wins, and the key holds its value. Concurrent INCRs count
// every one, and concurrent HSETs of different fields keep every field.
func TestGoRedisSetNXRace(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	const n = 40
	var wg sync.WaitGroup
	won := make([]bool, n)
	errs := make(chan error, 3*n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rdb := ts.client(t, nil)
			ok, err := rdb.SetNX(ctx, "race", fmt.Sprint("v", i), 0).Result()
			won[i] = ok
			if err != nil {
				errs <- fmt.Errorf("SETNX: %w", err)
			}
			if err := rdb.Incr(ctx, "count").Err(); err != nil {
				errs <- fmt.Errorf("INCR: %w", err)
			}
			if err := rdb.HSet(ctx, "h", fmt.Sprint("f", i), i).Err(); err != nil {
				errs <- fmt.Errorf("HSET: %w", err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rdb := ts.client(t, nil)
	winners := 0
	for i, ok := range won {
		if ok {
			winners++
			if got, err := rdb.Get(ctx, "race").Result(); err != nil || got != fmt.Sprint("v", i) {
				t.Errorf("GET race = %q, %v; want the winner's v%d", got, err, i)
			}
		}
	}
	if winners != 1 {
		t.Errorf("%d of %d concurrent SET NX won; want exactly 1", winners, n)
	}
	if got, err := rdb.Get(ctx, "count").Int(); err != nil || got != n {
		t.Errorf("after %d concurrent INCRs, count = %d, %v; want %d", n, got, err, n)
	}
	if got, err := rdb.HLen(ctx, "h").Result(); err != nil || got != n {
		t.Errorf("after %d concurrent HSETs of different fields, HLEN = %d, %v; want %d", n, got, err, n)
	}
}

// TestLCCAS: LC.CAS and LC.CAD write only at the expected version (0: the
// key is absent), and a conflict replies the current version first.
func TestLCCAS(t *testing.T) {
	ts := startServer(t, Config{})
	rc := ts.dial(t)
	for _, s := range []struct{ send, want string }{
		{"LC.CAS k 0 v1\r\n", `"1.0@n1"`},
		{"LC.CAS k 0 v2\r\n", `-CONFLICT 1.0@n1 fake: "k" is at version 1.0@n1`},
		{"LC.CAS k 1.0@n1 v2\r\n", `"2.0@n1"`},
		{"LC.GET k\r\n", `["v2" "2.0@n1"]`},
		{"LC.CAD k 1.0@n1\r\n", `-CONFLICT 2.0@n1 fake: "k" is at version 2.0@n1`},
		{"LC.CAD k 2.0@n1\r\n", `"3.0@n1"`},
		{"LC.GET k\r\n", "nil"},
		{"LC.CAS k 0 v3 LEVEL one\r\n", `"4.0@n1"`},
		{"LC.CAS k x v\r\n", `-ERR version "x": want <wall>.<logical>@n<node>, as reads reply it, or 0`},
		{"LC.CAS k 0\r\n", "-ERR wrong number of arguments for 'lc.cas' command"},
	} {
		rc.send(s.send)
		if got := rc.reply(); got != s.want {
			t.Errorf("%q → %s; want %s", strings.TrimSpace(s.send), got, s.want)
		}
	}
}
