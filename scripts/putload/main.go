// Command putload measures puts or gets over gRPC against etcd (KV.Put,
// KV.Range, linearizable) or Lightcone (lightcone.v1.KV Put, Get) alike:
// the same client, the same connections and the same keys, so that
// scripts/bench.sh and scripts/bench-table.sh compare the servers and not
// two benchmark tools. Each of -clients goroutines has its own connection,
// to the addresses of -addr in turn, and one request in flight at a time
// (like etcd's benchmark put --clients N --conns N). It prints one line:
// requests per second, p50 and p99 latency in milliseconds.
//
// -mode get first puts every one of -keys keys and reads each once through
// every address (neither timed: in a lease keyspace the reads prime the
// leases, as the demo's and realrun's priming does), then times -n gets.
//
// The messages are encoded by hand (bytes fields), which keeps etcd's
// generated code out of this module.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lightcone/lightcone/scripts/internal/closedloop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/protobuf/encoding/protowire"
)

// rawCodec sends and receives already-encoded protobuf messages.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }
func (rawCodec) Unmarshal(b []byte, v any) error {
	*v.(*[]byte) = append((*v.(*[]byte))[:0], b...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

var _ encoding.Codec = rawCodec{}

func main() {
	target := flag.String("target", "etcd", "etcd or lightcone")
	mode := flag.String("mode", "put", "put or get")
	addrs := flag.String("addr", "127.0.0.1:2379", "the servers' gRPC addresses, comma-separated; client i uses the i-th in turn")
	keyspace := flag.String("keyspace", "", "Lightcone keyspace (empty: the server's default)")
	clients := flag.Int("clients", 50, "concurrent clients, one connection each")
	total := flag.Int("n", 20000, "timed requests in all")
	keys := flag.Int("keys", 10000, "distinct keys")
	size := flag.Int("value-size", 3, "value bytes")
	flag.Parse()
	if err := run(*target, *mode, strings.Split(*addrs, ","), *keyspace, *clients, *total, *keys, *size); err != nil {
		fmt.Fprintln(os.Stderr, "putload:", err)
		os.Exit(1)
	}
}

// rpc is one method and its request's field numbers (0: not sent).
type rpc struct {
	method                         string
	keyspace, keyField, valueField protowire.Number
}

func run(target, mode string, addrs []string, keyspace string, clients, total, keys, size int) error {
	put, get := rpc{"/etcdserverpb.KV/Put", 0, 1, 2}, rpc{"/etcdserverpb.KV/Range", 0, 1, 0}
	if target == "lightcone" {
		put, get = rpc{"/lightcone.v1.KV/Put", 1, 2, 3}, rpc{"/lightcone.v1.KV/Get", 1, 2, 0}
	} else if target != "etcd" {
		return fmt.Errorf("unknown target %q (etcd or lightcone)", target)
	}
	if mode != "put" && mode != "get" {
		return fmt.Errorf("unknown mode %q (put or get)", mode)
	}
	conns := make([]*grpc.ClientConn, clients)
	for i := range conns {
		c, err := grpc.NewClient(addrs[i%len(addrs)], grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
		if err != nil {
			return err
		}
		defer c.Close()
		conns[i] = c
	}
	value := make([]byte, size)
	for i := range value {
		value[i] = 'x'
	}
	encode := func(r rpc, k int) []byte {
		var b []byte
		if r.keyspace != 0 && keyspace != "" {
			b = protowire.AppendTag(b, r.keyspace, protowire.BytesType)
			b = protowire.AppendString(b, keyspace)
		}
		b = protowire.AppendTag(b, r.keyField, protowire.BytesType)
		b = protowire.AppendBytes(b, fmt.Appendf(nil, "key:%012d", k))
		if r.valueField != 0 {
			b = protowire.AppendTag(b, r.valueField, protowire.BytesType)
			b = protowire.AppendBytes(b, value)
		}
		return b
	}
	ctx := context.Background()
	invoke := func(r rpc, c, k int) error {
		req, resp := encode(r, k%keys), []byte(nil)
		if err := conns[c].Invoke(ctx, r.method, &req, &resp); err != nil {
			return fmt.Errorf("%s: %w", r.method, err)
		}
		return nil
	}
	call := func(r rpc) func(c, k int) error {
		return func(c, k int) error { return invoke(r, c, k) }
	}
	// One put per connection first, so connection set-up is not timed.
	for c := range conns {
		if err := invoke(put, c, c); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	if mode == "put" {
		return closedloop.Run(os.Stdout, clients, total, call(put))
	}
	if err := closedloop.Run(io.Discard, clients, keys, call(put)); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	// Prime: every key read once through every address; connection i
	// goes to address i mod len(addrs), and a ClientConn takes concurrent
	// calls.
	n := len(addrs)
	if err := closedloop.Run(io.Discard, clients, keys*n, func(_, k int) error {
		return invoke(get, k%n, k/n)
	}); err != nil {
		return fmt.Errorf("prime: %w", err)
	}
	return closedloop.Run(os.Stdout, clients, total, call(get))
}
