// Command putload measures durable puts over gRPC against etcd (KV.Put)
// or Lightcone (lightcone.v1.KV Put) alike: the same client, the same
// connections and the same keys, so that scripts/bench.sh can compare the
// two servers and not two benchmark tools. Each of -clients goroutines has
// its own connection and one put in flight at a time (like etcd's
// benchmark put --clients N --conns N). It prints one line: puts per
// second, p50 and p99 latency in milliseconds.
//
// The messages are encoded by hand (two bytes fields), which keeps etcd's
// generated code out of this module.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

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
	addr := flag.String("addr", "127.0.0.1:2379", "the server's gRPC address")
	clients := flag.Int("clients", 50, "concurrent clients, one connection each")
	total := flag.Int("n", 20000, "puts in all")
	keys := flag.Int("keys", 10000, "distinct keys")
	size := flag.Int("value-size", 3, "value bytes")
	flag.Parse()
	if err := run(*target, *addr, *clients, *total, *keys, *size); err != nil {
		fmt.Fprintln(os.Stderr, "putload:", err)
		os.Exit(1)
	}
}

func run(target, addr string, clients, total, keys, size int) error {
	method, keyField, valueField := "/etcdserverpb.KV/Put", protowire.Number(1), protowire.Number(2)
	if target == "lightcone" {
		method, keyField, valueField = "/lightcone.v1.KV/Put", 2, 3
	} else if target != "etcd" {
		return fmt.Errorf("unknown target %q (etcd or lightcone)", target)
	}
	conns := make([]*grpc.ClientConn, clients)
	for i := range conns {
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
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
	encode := func(k int) []byte {
		var b []byte
		b = protowire.AppendTag(b, keyField, protowire.BytesType)
		b = protowire.AppendBytes(b, fmt.Appendf(nil, "key:%012d", k))
		b = protowire.AppendTag(b, valueField, protowire.BytesType)
		return protowire.AppendBytes(b, value)
	}
	ctx := context.Background()
	// One put per connection first, so connection set-up is not timed.
	for i, c := range conns {
		req, resp := encode(i%keys), []byte(nil)
		if err := c.Invoke(ctx, method, &req, &resp); err != nil {
			return fmt.Errorf("warm-up put: %w", err)
		}
	}
	var next atomic.Int64
	lat := make([][]time.Duration, clients)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var resp []byte
			for {
				k := next.Add(1) - 1
				if k >= int64(total) {
					return
				}
				req := encode(int(k) % keys)
				t := time.Now()
				if err := c.Invoke(ctx, method, &req, &resp); err != nil {
					errs <- err
					return
				}
				lat[i] = append(lat[i], time.Since(t))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("put: %w", err)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	q := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))]) / 1e6 }
	fmt.Printf("%.0f %.3f %.3f\n", float64(len(all))/elapsed.Seconds(), q(0.5), q(0.99))
	return nil
}
