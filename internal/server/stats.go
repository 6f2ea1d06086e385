package server

import (
	"context"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/keyspace"
	"github.com/lightcone/lightcone/internal/metrics"
	"github.com/lightcone/lightcone/internal/node"
	"github.com/lightcone/lightcone/internal/protocol"
)

// statsWait bounds how long a scrape or a /status request waits for the
// event loop to read the counters.
const statsWait = 2 * time.Second

// keyspaceStats reads the counters of the named keyspaces whose replicas
// export them (protocol.Counted). It reads them on the node's event loop,
// which owns the replicas; if ctx ends first it returns the error and
// nothing else (the loop may still run the read later, into a map nobody
// looks at).
func keyspaceStats(ctx context.Context, nd *node.Node, names []string) (map[string][]protocol.Counter, error) {
	out := map[string][]protocol.Counter{}
	err := nd.Inspect(ctx, func(r env.Replica, now int64) {
		mux, ok := r.(*keyspace.Mux)
		if !ok {
			return
		}
		for _, name := range names {
			if c, ok := mux.Replica(name).(protocol.Counted); ok {
				out[name] = c.Counters(now)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// exportKeyspaceStats registers each keyspace's protocol counters as
// lightcone_<protocol>_* series with the keyspace's label, read at each
// scrape.
func exportKeyspaceStats(m *metrics.Metrics, nd *node.Node, kss []servedKeyspace) {
	if len(kss) == 0 {
		return
	}
	names := make([]string, len(kss))
	protoOf := make(map[string]string, len(kss))
	for i, k := range kss {
		names[i] = k.name
		protoOf[k.name] = k.protocol
	}
	m.AddKeyspaceStats(func() (map[string][]metrics.Stat, error) {
		ctx, cancel := context.WithTimeout(context.Background(), statsWait)
		defer cancel()
		st, err := keyspaceStats(ctx, nd, names)
		if err != nil {
			return nil, err
		}
		out := make(map[string][]metrics.Stat, len(st))
		for ks, cs := range st {
			for _, c := range cs {
				out[ks] = append(out[ks], metrics.Stat{Name: protoOf[ks] + "_" + c.Name, Help: c.Help, Gauge: c.Gauge, Value: c.Value})
			}
		}
		return out, nil
	})
}
