package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lightcone/lightcone/internal/api/grpcapi"
	"github.com/lightcone/lightcone/internal/api/grpcapi/lightconev1"
)

// TestTxnSingleNode is issue 16's API test against a real single-node
// `lightcone server`, whose default keyspace (quorum, one node) runs
// transactions atomically: LC.TXN, MULTI/EXEC (redis-go's TxPipelined),
// gRPC Txn, a bank of 10 accounts under 20 concurrent clients moving
// money (the total never changes), bad input refused before anything is
// written, and a keyspace whose protocol runs no transactions refusing
// them, naming the ones that do.
func TestTxnSingleNode(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "lightcone.yaml")
	if err := os.WriteFile(cfg, []byte("keyspaces:\n  - {name: glob, protocol: lease, lease_length: 2s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := start(t, buildBinary(t), t.TempDir(), freeAddr(t), freeAddr(t), "--config", cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rc := redis.NewClient(&redis.Options{Addr: p.resp, Protocol: 2, PoolSize: 25})
	defer rc.Close()

	// LC.TXN: one element per operation.
	got, err := rc.Do(ctx, "LC.TXN", "WRITE", "a", "hello", "ADD", "n", "5", "READ", "missing").Slice()
	if err != nil || fmt.Sprint(got) != "[OK 5 <nil>]" {
		t.Fatalf("LC.TXN WRITE a, ADD n 5, READ missing = %v, %v; want [OK 5 <nil>]", got, err)
	}
	got, err = rc.Do(ctx, "LC.TXN", "READONLY", "READ", "a", "READ", "n").Slice()
	if err != nil || fmt.Sprint(got) != "[hello 5]" {
		t.Fatalf("LC.TXN READONLY READ a READ n = %v, %v; want [hello 5]", got, err)
	}
	got, err = rc.Do(ctx, "LC.TXN", "READ", "a", "DEL", "a", "ADD", "n", "-7").Slice()
	if err != nil || fmt.Sprint(got) != "[hello OK -2]" {
		t.Fatalf("LC.TXN READ a DEL a ADD n -7 = %v, %v; want [hello OK -2]", got, err)
	}
	if n, err := rc.Exists(ctx, "a").Result(); err != nil || n != 0 {
		t.Errorf("EXISTS a after the transaction deleted it = %d, %v; want 0", n, err)
	}

	// MULTI/EXEC through go-redis: replies per command, as Redis gives them.
	var get *redis.StringCmd
	var incr *redis.IntCmd
	var del *redis.IntCmd
	if _, err := rc.TxPipelined(ctx, func(pp redis.Pipeliner) error {
		pp.Set(ctx, "x", "1", 0)
		get = pp.Get(ctx, "n")
		incr = pp.IncrBy(ctx, "n", 10)
		del = pp.Del(ctx, "gone")
		return nil
	}); err != nil {
		t.Fatalf("TxPipelined: %v", err)
	}
	if get.Val() != "-2" || incr.Val() != 8 || del.Val() != 0 {
		t.Errorf("MULTI GET n, INCRBY n 10, DEL gone = %q, %d, %d; want -2, 8, 0", get.Val(), incr.Val(), del.Val())
	}

	// Bad input: refused with a clear error, nothing written.
	if err := rc.Set(ctx, "x", "one", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{"LC.TXN"}, "no operations"},
		{[]any{"LC.TXN", "WRITE", "k", "1", "WRITE", "k", "2"}, "declared twice"},
		{[]any{"LC.TXN", "READONLY", "WRITE", "k", "1"}, "read-only"},
		{[]any{"LC.TXN", "WRITE", "k", "1", "FROB", "k"}, "unknown operation"},
		{[]any{"LC.TXN", "WRITE", "k"}, "WRITE needs 2"},
		{[]any{"LC.TXN", "WRITE", "k", "1", "ADD", "n", "x"}, "not an integer"},
		{[]any{"LC.TXN", "WRITE", "k", "1", "ADD", "x", "1"}, "not a decimal integer"},
	} {
		if _, err := rc.Do(ctx, c.args...).Result(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v; want one saying %q", c.args, err, c.want)
		}
	}
	many := []any{"LC.TXN"}
	for i := range 65 {
		many = append(many, "WRITE", "k"+strconv.Itoa(i), "v")
	}
	if _, err := rc.Do(ctx, many...).Result(); err == nil || !strings.Contains(err.Error(), "more than 64") {
		t.Errorf("LC.TXN of 65 writes: %v; want a refusal", err)
	}
	if n, err := rc.Exists(ctx, "k", "k0").Result(); err != nil || n != 0 {
		t.Errorf("after the refused transactions EXISTS k k0 = %d, %v; want 0: nothing written", n, err)
	}
	// A command MULTI cannot queue aborts the transaction, as in Redis.
	_, err = rc.TxPipelined(ctx, func(pp redis.Pipeliner) error {
		pp.Set(ctx, "k", "1", 0)
		pp.HSet(ctx, "h", "f", "v")
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "EXECABORT") {
		t.Errorf("MULTI with HSET: %v; want EXECABORT", err)
	}
	if n, _ := rc.Exists(ctx, "k").Result(); n != 0 {
		t.Errorf("the aborted MULTI wrote k")
	}
	// A keyspace whose protocol runs no transactions refuses them.
	// (Its own client: go-redis pools connections, and LC.KEYSPACE
	// sticks to one.)
	glob := redis.NewClient(&redis.Options{Addr: p.resp, Protocol: 2, PoolSize: 1})
	defer glob.Close()
	if err := glob.Do(ctx, "LC.KEYSPACE", "glob").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := glob.Do(ctx, "LC.TXN", "ADD", "n", "1").Result(); err == nil ||
		!strings.Contains(err.Error(), "lease: this keyspace cannot run transactions") || !strings.Contains(err.Error(), "quorum on a single-node cluster") {
		t.Errorf("LC.TXN in a lease keyspace: %v; want a refusal naming quorum on a single-node cluster", err)
	}

	// gRPC Txn, through the client helpers.
	kv := kvClient(t, p.grpc)
	res, err := grpcapi.RunTxn(ctx, kv, "", grpcapi.Read("x"), grpcapi.Write("y", []byte("why")), grpcapi.Add("n", 2), grpcapi.Delete("z"))
	if err != nil {
		t.Fatalf("gRPC Txn: %v", err)
	}
	if r := res.GetResults(); len(r) != 4 || string(r[0].GetValue()) != "one" || string(r[2].GetValue()) != "8" || res.GetVersion().GetWallNanos() == 0 {
		t.Errorf("gRPC Txn = %v; want x read as one, n read as 8, a version", res)
	}
	if v, err := rc.Get(ctx, "n").Result(); err != nil || v != "10" {
		t.Errorf("GET n after the gRPC add = %q, %v; want 10", v, err)
	}
	for _, c := range []struct {
		ks   string
		ops  []*lightconev1.TxnOp
		code codes.Code
		want string
	}{
		{"", nil, codes.InvalidArgument, "no operations"},
		{"", []*lightconev1.TxnOp{grpcapi.Add("n", 1), grpcapi.Read("n")}, codes.InvalidArgument, "declared twice"},
		{"", []*lightconev1.TxnOp{{Key: []byte("n")}}, codes.InvalidArgument, "kind"},
		{"nope", []*lightconev1.TxnOp{grpcapi.Read("n")}, codes.NotFound, "unknown keyspace"},
		{"glob", []*lightconev1.TxnOp{grpcapi.Read("n")}, codes.InvalidArgument, "cannot run transactions"},
	} {
		_, err := grpcapi.RunTxn(ctx, kv, c.ks, c.ops...)
		if st := status.Convert(err); st.Code() != c.code || !strings.Contains(st.Message(), c.want) {
			t.Errorf("gRPC Txn %v in %q: %v; want %s saying %q", c.ops, c.ks, err, c.code, c.want)
		}
	}

	// The bank: 10 accounts of 1000, 20 clients each making 30 transfers
	// of a random amount between two random accounts, half through
	// LC.TXN and half through MULTI/EXEC. The total stays 10,000.
	const accounts, clients, transfers = 10, 20, 30
	acct := func(i int) string { return "acct:" + strconv.Itoa(i) }
	for i := range accounts {
		if err := rc.Set(ctx, acct(i), "1000", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 16))
			for range transfers {
				from, to, amt := randomTransfer(r, accounts)
				var err error
				if c%2 == 0 {
					err = rc.Do(ctx, "LC.TXN", "ADD", acct(from), -amt, "ADD", acct(to), amt).Err()
				} else {
					_, err = rc.TxPipelined(ctx, func(pp redis.Pipeliner) error {
						pp.DecrBy(ctx, acct(from), amt)
						pp.IncrBy(ctx, acct(to), amt)
						return nil
					})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("transfer: %v", err)
	}
	ops := []any{"LC.TXN", "READONLY"}
	for i := range accounts {
		ops = append(ops, "READ", acct(i))
	}
	bal, err := rc.Do(ctx, ops...).Slice()
	if err != nil {
		t.Fatal(err)
	}
	total, moved := 0, false
	for _, b := range bal {
		n, err := strconv.Atoi(fmt.Sprint(b))
		if err != nil {
			t.Fatalf("balance %v: %v", b, err)
		}
		total += n
		moved = moved || n != 1000
	}
	if total != accounts*1000 || !moved {
		t.Errorf("after %d transfers the balances are %v (total %d); want a total of %d, some moved", clients*transfers, bal, total, accounts*1000)
	}
}

// randomTransfer draws a transfer of 1 to 100 between two different
// accounts of n.
func randomTransfer(r *rand.Rand, n int) (from, to int, amt int64) {
	from, to = r.IntN(n), r.IntN(n-1)
	if to >= from {
		to++
	}
	return from, to, int64(1 + r.IntN(100))
}
