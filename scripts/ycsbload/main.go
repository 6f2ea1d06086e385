// Command ycsbload runs a YCSB core workload (A: 50% reads, 50% updates;
// B: 95% / 5%; Zipfian keys, internal/workload's generator) through RESP
// with go-redis, against Redis or Lightcone alike, so that
// scripts/bench-table.sh compares the servers with one client. It loads
// -records records (SET, pipelined, not timed), then runs -n operations
// (GET for a read, SET for an update) from -clients goroutines, each with
// its own connection and one operation in flight, and prints the line
// scripts/putload prints: operations per second, p50 and p99 latency in
// milliseconds.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/lightcone/lightcone/internal/workload"
	"github.com/lightcone/lightcone/scripts/internal/closedloop"
	"github.com/redis/go-redis/v9"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "the server's RESP address")
	name := flag.String("workload", "a", "YCSB core workload: a or b (any of a..f whose operations are reads and updates)")
	records := flag.Int("records", 10000, "records loaded before the timed run")
	total := flag.Int("n", 50000, "timed operations in all")
	clients := flag.Int("clients", 50, "concurrent clients, one connection each")
	size := flag.Int("value-size", workload.DefaultValueSize, "value bytes")
	seed := flag.Uint64("seed", 1, "random seed of the key and operation choices")
	flag.Parse()
	if err := run(*addr, *name, *records, *total, *clients, *size, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "ycsbload:", err)
		os.Exit(1)
	}
}

func run(addr, name string, records, total, clients, size int, seed uint64) error {
	spec, err := workload.Preset(name)
	if err != nil {
		return err
	}
	if spec.InsertProportion+spec.ScanProportion+spec.ReadModifyWriteProportion > 0 {
		return fmt.Errorf("workload %s has inserts, scans or read-modify-writes; only reads and updates are run", name)
	}
	spec.RecordCount, spec.OperationCount, spec.ValueSize = records, total, size
	// One generator per client: a Generator is not safe for concurrent use.
	gens := make([]*workload.Generator, clients)
	rngs := make([]*rand.Rand, clients)
	conns := make([]*redis.Client, clients)
	ctx := context.Background()
	for c := range clients {
		if gens[c], err = workload.NewGenerator(spec); err != nil {
			return err
		}
		rngs[c] = rand.New(rand.NewPCG(seed, uint64(c)))
		conns[c] = redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, PoolSize: 1, MaxRetries: -1})
		defer conns[c].Close()
		if err := conns[c].Ping(ctx).Err(); err != nil {
			return fmt.Errorf("ping %s: %w", addr, err)
		}
	}
	value := strings.Repeat("x", size)
	keys := gens[0].LoadKeys()
	const batch = 100
	load := func(c, b int) error {
		p := conns[c].Pipeline()
		for _, k := range keys[b*batch : min(len(keys), (b+1)*batch)] {
			p.Set(ctx, k, value, 0)
		}
		_, err := p.Exec(ctx)
		return err
	}
	if err := closedloop.Run(io.Discard, clients, (len(keys)+batch-1)/batch, load); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	return closedloop.Run(os.Stdout, clients, total, func(c, _ int) error {
		op := gens[c].Next(rngs[c])
		switch op.Kind {
		case workload.Read:
			if err := conns[c].Get(ctx, op.Key).Err(); err != nil && !errors.Is(err, redis.Nil) {
				return fmt.Errorf("GET: %w", err)
			}
		case workload.Update:
			if err := conns[c].Set(ctx, op.Key, value, 0).Err(); err != nil {
				return fmt.Errorf("SET: %w", err)
			}
		default:
			return fmt.Errorf("unexpected %s", op.Kind)
		}
		return nil
	})
}
