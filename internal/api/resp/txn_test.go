package resp

import (
	"fmt"
	"sync"
	"testing"

	"github.com/lightcone/lightcone/internal/wire"
)

// TestMultiExec: MULTI's state machine as Redis has it (nesting, EXEC and
// DISCARD without MULTI, EXECABORT after a refused command, an empty
// EXEC), and the one transaction EXEC submits: GET then INCR of a key is
// one add, DEL a read and a delete, SET a write.
func TestMultiExec(t *testing.T) {
	ts := startServer(t, Config{})
	var mu sync.Mutex // txns is written on the backend's loop
	var txns []*wire.Txn
	ts.b.setFail(func(req *wire.Request) *wire.Error {
		if req.Op == wire.OpTxn {
			mu.Lock()
			defer mu.Unlock()
			txns = append(txns, req.Txn)
			return &wire.Error{Code: wire.ErrInvalid, Msg: "fake: no transactions"}
		}
		return nil
	})
	rc := ts.dial(t)
	for _, c := range []struct{ cmd, want string }{
		{"EXEC\r\n", "-ERR EXEC without MULTI"},
		{"DISCARD\r\n", "-ERR DISCARD without MULTI"},
		{"MULTI\r\n", "+OK"},
		{"MULTI\r\n", "-ERR MULTI calls can not be nested"},
		{"EXEC\r\n", "[]"},
		{"MULTI\r\n", "+OK"},
		{"SET a 1\r\n", "+QUEUED"},
		{"DISCARD\r\n", "+OK"},
		{"MULTI\r\n", "+OK"},
		{"SET a 1\r\n", "+QUEUED"},
		{"HSET h f v\r\n", "-ERR HSET is not supported inside MULTI: lightcone transactions take GET, SET, DEL, INCR, DECR, INCRBY and DECRBY"},
		{"EXEC\r\n", "-EXECABORT Transaction discarded because of previous errors."},
		{"MULTI\r\n", "+OK"},
		{"GET n\r\n", "+QUEUED"},
		{"INCRBY n 3\r\n", "+QUEUED"},
		{"DEL d\r\n", "+QUEUED"},
		{"SET s v\r\n", "+QUEUED"},
		{"EXEC\r\n", "-ERR fake: no transactions"},
		{"WATCH a\r\n", "-" + msgWatch},
	} {
		rc.send(c.cmd)
		if got := rc.reply(); got != c.want {
			t.Errorf("%q = %s; want %s", c.cmd, got, c.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(txns) != 1 {
		t.Fatalf("%d transactions reached the backend; want 1", len(txns))
	}
	want := "[{add n 3 false} {read d 0 false} {write d 0 true} {write s 0 false}]"
	var got []string
	for _, op := range txns[0].Ops {
		got = append(got, fmt.Sprintf("{%s %s %d %v}", op.Kind, op.Key, op.Delta, op.Delete))
	}
	if fmt.Sprint(got) != want {
		t.Errorf("EXEC submitted %v; want %s", got, want)
	}
}
