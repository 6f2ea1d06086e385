package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lightcone/lightcone/internal/api/resp"
	"github.com/lightcone/lightcone/internal/gcfloor"
	"github.com/lightcone/lightcone/internal/server"
	"github.com/lightcone/lightcone/internal/store/disk"
)

// gcHeapFloor is the heap size below which the server does not collect
// (see gcfloor): with its live heap of tens of MB, serving requests
// otherwise starts a collection several times a second, and each one's
// stops of the world are its p99 on a loaded machine.
const gcHeapFloor = 128 << 20

func serverCmd() *cobra.Command {
	var (
		configPath string
		c          server.Config
		sync       string
		logJSON    bool
		clientTLS  server.TLSFiles
		peerTLS    server.TLSFiles
	)
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run a Lightcone node (alone: a single-node store in ./lightcone-data)",
		Long: `server runs a Lightcone node: its storage, the keyspace protocol, and the front ends.
With no flags it is a single-node store with data in ./lightcone-data, RESP (Redis
protocol) on 127.0.0.1:6379, gRPC on 127.0.0.1:7380 and the HTTP admin endpoint (/metrics, /healthz, /readyz,
/status) on 127.0.0.1:7381. SIGINT or SIGTERM stops it cleanly.`,
		Example: `  lightcone server
  redis-cli set k v && redis-cli get k
  curl -s 127.0.0.1:7381/metrics | grep lightcone_
  lightcone server --data-dir /var/lib/lightcone --resp-addr 0.0.0.0:6379 --sync everysec`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := server.Config{}
			if configPath != "" {
				var err error
				if cfg, err = server.LoadConfig(configPath); err != nil {
					return err
				}
			}
			setClientTLS := func() {
				cfg.ClientTLS = &server.TLSFiles{CertFile: clientTLS.CertFile, KeyFile: clientTLS.KeyFile, CAFile: clientTLS.CAFile}
			}
			setPeerTLS := func() {
				cfg.PeerTLS = &server.TLSFiles{CertFile: peerTLS.CertFile, KeyFile: peerTLS.KeyFile, CAFile: peerTLS.CAFile}
			}
			applyChanged(cmd.Flags(), map[string]func(){
				"data-dir":                   func() { cfg.DataDir = c.DataDir },
				"resp-addr":                  func() { cfg.RESPAddr = c.RESPAddr },
				"grpc-addr":                  func() { cfg.GRPCAddr = c.GRPCAddr },
				"http-addr":                  func() { cfg.HTTPAddr = c.HTTPAddr },
				"sync":                       func() { cfg.Sync = disk.SyncPolicy(sync) },
				"disk-reserve":               func() { cfg.DiskReserve = c.DiskReserve },
				"fsync-holds-thread":         func() { cfg.FsyncHoldsThread = c.FsyncHoldsThread },
				"row-cache-size":             func() { cfg.RowCacheSize = c.RowCacheSize },
				"spare-proc":                 func() { cfg.SpareProc = c.SpareProc },
				"no-published-reads":         func() { cfg.NoPublishedReads = c.NoPublishedReads },
				"requirepass":                func() { cfg.RequirePass = c.RequirePass },
				"token":                      func() { cfg.Token = c.Token },
				"node":                       func() { cfg.Node = c.Node },
				"peer-addr":                  func() { cfg.PeerAddr = c.PeerAddr },
				"ping-interval":              func() { cfg.PingInterval = c.PingInterval },
				"pprof":                      func() { cfg.Pprof = c.Pprof },
				"fault-injection":            func() { cfg.FaultInjection = c.FaultInjection },
				"clock-offset":               func() { cfg.ClockOffset = c.ClockOffset },
				"tls-cert":                   setClientTLS,
				"tls-key":                    setClientTLS,
				"tls-client-ca":              setClientTLS,
				"peer-tls-cert":              setPeerTLS,
				"peer-tls-key":               setPeerTLS,
				"peer-tls-ca":                setPeerTLS,
				"read":                       func() { cfg.Read = c.Read },
				"write":                      func() { cfg.Write = c.Write },
				"maxclients":                 func() { cfg.MaxClients = c.MaxClients },
				"resp-event-loops":           func() { cfg.RESPEventLoops = c.RESPEventLoops },
				"client-query-buffer-limit":  func() { cfg.ClientQueryBufferLimit = c.ClientQueryBufferLimit },
				"client-output-buffer-limit": func() { cfg.ClientOutputBufferLimit = c.ClientOutputBufferLimit },
				"client-buffer-budget":       func() { cfg.ClientBufferBudget = c.ClientBufferBudget },
			})
			var h slog.Handler = slog.NewTextHandler(os.Stderr, nil)
			if logJSON {
				h = slog.NewJSONHandler(os.Stderr, nil)
			}
			cfg.Log = slog.New(h)
			if os.Getenv("GOGC") == "" {
				// A storage server trades memory for CPU and tail latency:
				// never collect before the heap reaches gcHeapFloor; above
				// it, Go's default rate (GOGC 200 there let a hostile
				// client's large values push the peak past the memory
				// bound TestMemoryBoundedUnderHostileClient checks).
				// Override both with GOGC.
				gcfloor.Keep(100, gcHeapFloor)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return server.Run(ctx, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "YAML file with the server's settings (flags override it)")
	f.StringVar(&c.DataDir, "data-dir", server.DefaultDataDir, "where the node keeps its data")
	f.StringVar(&c.RESPAddr, "resp-addr", server.DefaultRESPAddr, `RESP (Redis protocol) listen address; "off" disables`)
	f.StringVar(&c.GRPCAddr, "grpc-addr", server.DefaultGRPCAddr, `gRPC API listen address (lightcone.v1.KV, grpc.health.v1); "off" disables`)
	f.StringVar(&c.HTTPAddr, "http-addr", server.DefaultHTTPAddr, `HTTP admin listen address (/metrics, /healthz, /readyz, /status); "off" disables`)
	f.StringVar(&sync, "sync", string(disk.SyncAlways), "when writes are fsynced: always (before any reply; group commit), everysec, never")
	f.Var(&c.DiskReserve, "disk-reserve", "free space below which writes are refused and /readyz fails, e.g. 512MiB (default 5% of the filesystem, at least 4 memtables, at most 1GiB)")
	f.BoolVar(&c.NoPublishedReads, "no-published-reads", false, "send every read through the node's event loop: none is answered from a reply its protocol published (quorum fast-path and lease-local reads)")
	c.RowCacheSize = disk.DefaultCacheBytes
	f.Var(&c.RowCacheSize, "row-cache-size", "most value bytes the storage engine's row cache of recent keys keeps in memory, one key per 512 bytes of it (each key also costs about 0.6 KiB), e.g. 1GiB")
	f.BoolVar(&c.SpareProc, "spare-proc", false, "while the storage engine flushes or compacts, run with one more Go scheduler slot (GOMAXPROCS+1): with GOMAXPROCS=1 background work then runs beside the requests instead of taking their core; only when the GOMAXPROCS environment variable is set below the CPUs, and not meant for a CPU quota")
	f.BoolVar(&c.FsyncHoldsThread, "fsync-holds-thread", false, "fsync the write-ahead log with raw system calls that keep the Go scheduler's slot (as Redis's thread waits in fsync): faster durable writes with GOMAXPROCS=1, but a disk that hangs in fsync stalls the whole process")
	f.StringVar(&c.RequirePass, "requirepass", "", "password RESP clients must AUTH with")
	f.StringVar(&c.Token, "token", "", "bearer token the HTTP admin endpoints require (except /healthz)")
	f.StringVar(&c.Read, "read", "", "default read consistency level (default QUORUM)")
	f.StringVar(&c.Write, "write", "", "default write consistency level (default QUORUM)")
	f.BoolVar(&logJSON, "log-json", false, "log as JSON lines instead of text")
	f.StringVar(&c.Node, "node", "", "this node's name in the config's cluster (<region>-<i>)")
	f.StringVar(&c.PeerAddr, "peer-addr", "", "node-to-node listen address (default: the cluster config's)")
	f.StringVar(&clientTLS.CertFile, "tls-cert", "", "serve RESP and HTTP over TLS with this certificate (PEM)")
	f.StringVar(&clientTLS.KeyFile, "tls-key", "", "the TLS certificate's private key (PEM)")
	f.StringVar(&clientTLS.CAFile, "tls-client-ca", "", "require client certificates signed by this CA (mutual TLS)")
	f.StringVar(&peerTLS.CertFile, "peer-tls-cert", "", "mutual TLS between nodes: this node's certificate (PEM), which must name the node by the URI SAN lightcone://node/NAME, else it does not start and peers refuse it; {node} in a path stands for the node's name")
	f.StringVar(&peerTLS.KeyFile, "peer-tls-key", "", "mutual TLS between nodes: its private key (PEM)")
	f.StringVar(&peerTLS.CAFile, "peer-tls-ca", "", "mutual TLS between nodes: the cluster CA (PEM)")
	f.IntVar(&c.MaxClients, "maxclients", resp.DefaultMaxClients, "most RESP clients at once (lowered to fit the open file limit); one more gets \"ERR max number of clients reached\"")
	f.IntVar(&c.RESPEventLoops, "resp-event-loops", 0, "event loops serving plain TCP RESP clients, each over an epoll set of its own as Redis's loop is (0: one with GOMAXPROCS=1, none with more; -1: none, a goroutine per connection, as TLS connections always have)")
	c.ClientQueryBufferLimit = resp.DefaultQueryBufferLimit
	f.Var(&c.ClientQueryBufferLimit, "client-query-buffer-limit", "most bytes of command arguments one RESP connection holds (a larger command is refused)")
	c.ClientOutputBufferLimit = resp.DefaultOutputBufferLimit
	f.Var(&c.ClientOutputBufferLimit, "client-output-buffer-limit", "reply bytes one RESP connection holds before it stops reading commands")
	c.ClientBufferBudget = resp.DefaultBufferBudget
	f.Var(&c.ClientBufferBudget, "client-buffer-budget", "most bytes all RESP connections hold together in arguments and replies (past it commands get -OOM)")
	f.DurationVar(&c.PingInterval, "ping-interval", 0, "how often each peer link's round trip is measured (default 1s; see /status peer_rtt)")
	f.BoolVar(&c.Pprof, "pprof", false, "serve Go's profiler at /debug/pprof/ on the HTTP admin endpoint")
	f.BoolVar(&c.FaultInjection, "fault-injection", false, "serve POST /debug/transport to block peers and /debug/clock to step the wall clock (tests and demos)")
	f.DurationVar(&c.ClockOffset, "clock-offset", 0, "with --fault-injection: start with the wall clock this far off the system's (a machine whose clock was stepped)")
	return cmd
}
