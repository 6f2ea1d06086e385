// Package closedloop runs a closed-loop load, one request in flight per
// client, and prints the one line the benchmark scripts parse:
// "ops/s p50-ms p99-ms". scripts/putload and scripts/ycsbload share it, so
// that scripts/bench-table.sh reads both with one parser.
package closedloop

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Run calls op(c, k) for k = 0..total-1, each k once, from clients
// goroutines (c is the goroutine's number, for its own connection), times
// every call, and writes "ops/s p50 p99" (milliseconds) to w. The first
// error stops the run and is returned.
func Run(w io.Writer, clients, total int, op func(c, k int) error) error {
	var next atomic.Int64
	lat := make([][]time.Duration, clients)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := next.Add(1) - 1
				if k >= int64(total) {
					return
				}
				t := time.Now()
				if err := op(c, int(k)); err != nil {
					errs <- err
					next.Store(int64(total))
					return
				}
				lat[c] = append(lat[c], time.Since(t))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	all := slices.Concat(lat...)
	if len(all) == 0 {
		return fmt.Errorf("closedloop: no requests")
	}
	slices.Sort(all)
	q := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))]) / 1e6 }
	_, err := fmt.Fprintf(w, "%.0f %.3f %.3f\n", float64(len(all))/elapsed.Seconds(), q(0.5), q(0.99))
	return err
}
