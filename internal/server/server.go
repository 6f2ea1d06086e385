// Package server assembles a Lightcone node process: storage, the node's
// event loop running a keyspace's protocol, and the front ends (RESP, HTTP
// admin). `lightcone server` is a thin wrapper around Run.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/lightcone/lightcone/internal/api/admin"
	"github.com/lightcone/lightcone/internal/api/resp"
	"github.com/lightcone/lightcone/internal/metrics"
	"github.com/lightcone/lightcone/internal/node"
	"github.com/lightcone/lightcone/internal/protocol/quorum"
	"github.com/lightcone/lightcone/internal/store/disk"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Defaults of Config's zero fields.
const (
	DefaultDataDir  = "./lightcone-data"
	DefaultRESPAddr = "127.0.0.1:6379" // Redis's port: redis-cli works unchanged
	DefaultHTTPAddr = "127.0.0.1:7381"
	DefaultKeyspace = "default"
)

// Config configures a node process. YAML field names are given; zero fields
// take the defaults noted.
type Config struct {
	DataDir  string          `yaml:"data_dir"`  // default ./lightcone-data
	RESPAddr string          `yaml:"resp_addr"` // default 127.0.0.1:6379; "off" disables
	HTTPAddr string          `yaml:"http_addr"` // default 127.0.0.1:7381; "off" disables
	Sync     disk.SyncPolicy `yaml:"sync"`      // always (default), everysec, never
	// RequirePass is the RESP password (Redis's requirepass). Default none.
	RequirePass string `yaml:"requirepass"`
	// Token, if set, is required as "Authorization: Bearer <token>" by the
	// HTTP admin endpoints except /healthz.
	Token string `yaml:"token"`
	// Read and Write are the default keyspace's consistency levels.
	Read  string `yaml:"read"`
	Write string `yaml:"write"`

	Log *slog.Logger `yaml:"-"`
	// Ready, if set, is told the listening addresses once serving (tests).
	Ready func(Addrs) `yaml:"-"`
}

// Addrs are the addresses a running server listens on.
type Addrs struct {
	RESP, HTTP string
}

// EnsureDefaults fills the zero fields.
func (c *Config) EnsureDefaults() {
	if c.DataDir == "" {
		c.DataDir = DefaultDataDir
	}
	if c.RESPAddr == "" {
		c.RESPAddr = DefaultRESPAddr
	}
	if c.HTTPAddr == "" {
		c.HTTPAddr = DefaultHTTPAddr
	}
	if c.Sync == "" {
		c.Sync = disk.SyncAlways
	}
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
}

// singleNodeWorld is the world of a standalone server: one region, one node.
func singleNodeWorld() (*topo.Topology, error) {
	w, err := topo.Parse([]byte("name: standalone\ndescription: a single node\nnodes_per_region: 1\nregions: [{name: local, provider: local}]\n"))
	if err != nil {
		return nil, err
	}
	return topo.NewTopology(w), nil
}

// Run serves until ctx is cancelled, then shuts down cleanly: front ends
// stop accepting, in-flight requests finish or fail, the store syncs and
// closes.
func Run(ctx context.Context, cfg Config) (err error) {
	cfg.EnsureDefaults()
	log := cfg.Log
	policy, err := disk.ParseSyncPolicy(string(cfg.Sync))
	if err != nil {
		return err
	}
	qc := quorum.Config{}
	if cfg.Read != "" {
		if qc.Read, err = wire.ParseLevel(cfg.Read); err != nil {
			return fmt.Errorf("read: %w", err)
		}
	}
	if cfg.Write != "" {
		if qc.Write, err = wire.ParseLevel(cfg.Write); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	tp, err := singleNodeWorld()
	if err != nil {
		return err
	}
	ks, err := quorum.NewKeyspace(tp, qc)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	eng, err := disk.OpenPebble(cfg.DataDir, policy)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, eng.Close()) }()

	m := metrics.New(metrics.Labels{Node: tp.Nodes[0].Name, Region: "local", Keyspace: DefaultKeyspace, Protocol: "quorum"})
	nd, err := node.New(node.Config{ID: 0, Topology: tp, Factory: ks.Factory(), Engine: eng, Observer: m, Log: log})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	loopErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		loopErr <- nd.Run(ctx)
		cancel()
	}()

	var addrs Addrs
	var closers []func() error
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if cerr := closers[i](); cerr != nil && !errors.Is(cerr, resp.ErrServerClosed) && !errors.Is(cerr, http.ErrServerClosed) {
				log.Warn("server: shutdown", "err", cerr)
			}
		}
		cancel()
		wg.Wait()
		if lerr := <-loopErr; lerr != nil {
			err = errors.Join(err, lerr)
		}
	}()

	if cfg.RESPAddr != "off" {
		l, err := net.Listen("tcp", cfg.RESPAddr)
		if err != nil {
			return fmt.Errorf("resp_addr: %w", err)
		}
		rs := resp.NewServer(resp.Config{Addr: cfg.RESPAddr, RequirePass: cfg.RequirePass, Log: log,
			Info: func() map[string]string {
				return map[string]string{"lightcone_protocol": "quorum", "lightcone_sync": string(policy), "lightcone_data_dir": cfg.DataDir}
			}}, nd)
		addrs.RESP = l.Addr().String()
		closers = append(closers, rs.Close)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := rs.Serve(l); err != nil && !errors.Is(err, resp.ErrServerClosed) {
				log.Error("server: resp", "err", err)
				cancel()
			}
		}()
	}
	if cfg.HTTPAddr != "off" {
		l, err := net.Listen("tcp", cfg.HTTPAddr)
		if err != nil {
			return fmt.Errorf("http_addr: %w", err)
		}
		hs := admin.NewServer(cfg.HTTPAddr, admin.Config{
			Metrics: m, Token: cfg.Token, Log: log,
			Status: func() any {
				return map[string]any{"node": tp.Nodes[0].Name, "protocol": "quorum", "sync": policy, "data_dir": cfg.DataDir,
					"resp_addr": addrs.RESP, "keyspaces": []string{DefaultKeyspace}}
			},
		})
		addrs.HTTP = l.Addr().String()
		closers = append(closers, func() error {
			sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
			defer c()
			return hs.Shutdown(sctx)
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("server: http", "err", err)
				cancel()
			}
		}()
	}
	log.Info("lightcone server ready", "resp", addrs.RESP, "http", addrs.HTTP, "data_dir", cfg.DataDir, "sync", policy)
	if cfg.Ready != nil {
		cfg.Ready(addrs)
	}
	<-ctx.Done()
	log.Info("lightcone server stopping")
	return nil
}
