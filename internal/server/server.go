// Package server assembles a Lightcone node process: storage, the node's
// event loop running a keyspace's protocol, and the front ends (RESP, HTTP
// admin). `lightcone server` is a thin wrapper around Run.
package server

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"gopkg.in/yaml.v3"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/lightcone/lightcone/internal/api/admin"
	"github.com/lightcone/lightcone/internal/api/grpcapi"
	"github.com/lightcone/lightcone/internal/api/grpcapi/lightconev1"
	"github.com/lightcone/lightcone/internal/api/resp"
	"github.com/lightcone/lightcone/internal/cost"
	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/keyspace"
	"github.com/lightcone/lightcone/internal/metrics"
	"github.com/lightcone/lightcone/internal/node"
	"github.com/lightcone/lightcone/internal/protocol"
	_ "github.com/lightcone/lightcone/internal/protocol/all" // every protocol, from the registry
	"github.com/lightcone/lightcone/internal/store/disk"
	"github.com/lightcone/lightcone/internal/svchost"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/transport"
	"github.com/lightcone/lightcone/internal/wire"
	"github.com/lightcone/lightcone/internal/yamlfile"
)

// Defaults of Config's zero fields.
const (
	DefaultDataDir  = "./lightcone-data"
	DefaultRESPAddr = "127.0.0.1:6379" // Redis's port: redis-cli works unchanged
	DefaultGRPCAddr = "127.0.0.1:7380"
	DefaultHTTPAddr = "127.0.0.1:7381"
	DefaultKeyspace = "default"
)

// Config configures a node process. YAML field names are given; zero fields
// take the defaults noted.
type Config struct {
	DataDir  string          `yaml:"data_dir"`  // default ./lightcone-data
	RESPAddr string          `yaml:"resp_addr"` // default 127.0.0.1:6379; "off" disables
	GRPCAddr string          `yaml:"grpc_addr"` // default 127.0.0.1:7380; "off" disables
	HTTPAddr string          `yaml:"http_addr"` // default 127.0.0.1:7381; "off" disables
	PeerAddr string          `yaml:"peer_addr"` // cluster transport; default from the cluster's nodes
	Sync     disk.SyncPolicy `yaml:"sync"`      // always (default), everysec, never
	// DiskReserve is the free space on the data directory's filesystem
	// below which client writes are refused (RESP "ERR disk full: …",
	// gRPC RESOURCE_EXHAUSTED) and /readyz fails, keeping room for
	// flushes, compactions and the protocols' own writes; writes resume on
	// their own once space is back. A size ("512MiB"). Default 5% of the
	// filesystem, at least 4 memtables, at most 1 GiB.
	DiskReserve disk.ByteSize `yaml:"disk_reserve"`
	// FsyncHoldsThread makes the write-ahead log's fsyncs keep their
	// thread's Go scheduler slot, as Redis's one thread waits in its
	// fsync: faster durable writes on one core (GOMAXPROCS=1), but a disk
	// that hangs in fsync stalls the whole process until it returns
	// (disk.Options.FsyncHoldsThread). Default false.
	FsyncHoldsThread bool `yaml:"fsync_holds_thread"`
	// RowCacheSize bounds the storage engine's row cache, the latest
	// records of recently read and written keys kept in memory: the value
	// bytes it holds, and one key per 512 bytes of it. A size ("1GiB").
	// Default 64 MiB (131,072 keys); under 512 bytes it keeps none. Each
	// key kept costs about 0.6 KiB of memory besides its value
	// (docs/limits.md, "The node's own caches").
	RowCacheSize disk.ByteSize `yaml:"row_cache_size"`
	// SpareProc runs the storage engine's flushes and compactions on one
	// more Go scheduler slot than the process has (GOMAXPROCS+1 while
	// they run): with GOMAXPROCS=1 they then run beside the requests
	// instead of taking their core. It acts only when the GOMAXPROCS
	// environment variable set the process below its CPUs, and not under
	// a CPU quota; /status says whether it is in effect
	// (disk.Options.SpareProc). Default false.
	SpareProc bool `yaml:"spare_proc"`
	// NoPublishedReads turns published reads off: every read goes through
	// the node's event loop, none is answered from a reply the protocol
	// published (node.Config.PublishReads; docs/performance.md, "Reads
	// answered without the loop"). For comparisons and as an escape hatch;
	// default false (published reads on).
	NoPublishedReads bool `yaml:"no_published_reads"`
	// FS, if set, is the filesystem the data directory is on (tests inject
	// a disk.FillingFS); nil: the operating system's.
	FS vfs.FS `yaml:"-"`
	// RequirePass is the RESP password (Redis's requirepass). Default none.
	RequirePass string `yaml:"requirepass"`
	// Token, if set, is required as "Authorization: Bearer <token>" by the
	// gRPC API (except health checks) and the HTTP admin endpoints (except
	// /healthz).
	Token string `yaml:"token"`
	// Read and Write are the default keyspace's consistency levels.
	Read  string `yaml:"read"`
	Write string `yaml:"write"`

	// Cluster, if set, makes this node one of a multi-node cluster; Node
	// names which. Without it the server is a standalone single node.
	Cluster *Cluster `yaml:"cluster"`
	Node    string   `yaml:"node"`
	// Keyspace is the default keyspace's policy (its levels are Read and
	// Write below unless it names its own).
	Keyspace KeyspacePolicy `yaml:"keyspace"`
	// StorageServices configures the regions' storage services
	// (internal/storagesvc), by region name: backend hosted (the default
	// for a region not listed: durable, in data_dir/services on the
	// region's first node) or
	// s3 (an S3-compatible endpoint and bucket). See
	// docs/storage-services.md.
	StorageServices map[string]svchost.Backend `yaml:"storage_services"`
	// Keyspaces are further keyspaces, each with its own policy, served
	// beside the default one. Clients name them (RESP LC.KEYSPACE, gRPC's
	// keyspace field).
	Keyspaces []KeyspacePolicy `yaml:"keyspaces"`
	// ClientTLS, if set, serves RESP and HTTP over TLS (mutual TLS when it
	// names a CA). PeerTLS, if set, secures node-to-node traffic with mutual
	// TLS.
	ClientTLS *TLSFiles `yaml:"client_tls"`
	PeerTLS   *TLSFiles `yaml:"peer_tls"`
	// MaxClients is the most RESP connections at once (Redis's
	// maxclients); one more is told "ERR max number of clients reached".
	// Default 10000, lowered to fit the open file limit (logged).
	MaxClients int `yaml:"maxclients"`
	// RESPEventLoops is how many event loops serve plain TCP RESP
	// connections, each over an epoll set of its own as Redis's loop is
	// (resp.Config.EventLoops): 0, the default, resp.DefaultEventLoops
	// (one with GOMAXPROCS=1, none with more); -1 none, a goroutine per
	// connection. TLS connections always have their own goroutine.
	RESPEventLoops int `yaml:"resp_event_loops"`
	// ClientQueryBufferLimit, ClientOutputBufferLimit and
	// ClientBufferBudget bound what RESP clients make the server hold: a
	// connection's command arguments (default 128mb), a connection's
	// unwritten replies (default 128mb), and all connections' together
	// (default 1gb). See resp.Config and docs/limits.md.
	ClientQueryBufferLimit  resp.ByteSize `yaml:"client_query_buffer_limit"`
	ClientOutputBufferLimit resp.ByteSize `yaml:"client_output_buffer_limit"`
	ClientBufferBudget      resp.ByteSize `yaml:"client_buffer_budget"`
	// PingInterval is how often the transport measures each link's round
	// trip (reported on /status). Default 1s.
	PingInterval time.Duration `yaml:"ping_interval"`
	// Pprof serves Go's profiler under /debug/pprof/ on the HTTP admin
	// endpoint (behind the token, if one is set). Default off.
	Pprof bool `yaml:"pprof"`
	// FaultInjection serves POST /debug/transport on the HTTP admin
	// endpoint, to block and unblock peers, and POST /debug/clock, to step
	// the node's wall clock (tests, demos, the nemesis). Default off.
	FaultInjection bool `yaml:"fault_injection"`
	// ClockOffset, with FaultInjection, starts the node's wall clock this
	// far from the system's, as on a machine whose clock was stepped (the
	// nemesis restarts a node on the clock it stepped). Default 0.
	ClockOffset time.Duration `yaml:"clock_offset"`

	Log *slog.Logger `yaml:"-"`
	// Ready, if set, is told the listening addresses once serving (tests).
	Ready func(Addrs) `yaml:"-"`
}

// LoadConfig reads a YAML config (yamlfile.Decode: an unknown field, a
// keyspace's setting its protocol lacks or a wrongly typed value is an
// error naming the file, the line and the valid names). A cluster world
// given as a relative file path is taken relative to the config file.
func LoadConfig(path string) (Config, error) {
	var c Config
	data, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	if err := yamlfile.Decode(path, data, &c, "server config"); err != nil {
		return Config{}, err
	}
	if cl := c.Cluster; cl != nil && cl.World != "" && !topo.IsPreset(cl.World) && !filepath.IsAbs(cl.World) {
		cl.World = filepath.Join(filepath.Dir(path), cl.World)
	}
	return c, nil
}

// Version is the software version servers report.
const Version = "0.1.0-dev"

// Cluster describes every node of a cluster; all nodes share it.
type Cluster struct {
	Name string `yaml:"name"` // checked when nodes connect; default "lightcone"
	// World is a preset name or YAML file: the regions, nodes per region
	// and latency model. Nodes are named <region>-<i>.
	World string `yaml:"world"`
	// WANEmulation holds every message for the world's one-way delay
	// between the two nodes' regions, so a whole world runs on one
	// machine. Off by default.
	WANEmulation bool `yaml:"wan_emulation"`
	// Nodes gives each node's addresses, by node name.
	Nodes map[string]NodeAddrs `yaml:"nodes"`
}

// NodeAddrs are one node's listen addresses.
type NodeAddrs struct {
	Peer string `yaml:"peer"` // node-to-node transport
	RESP string `yaml:"resp"`
	GRPC string `yaml:"grpc"`
	HTTP string `yaml:"http"`
}

// KeyspacePolicy is a keyspace's name, protocol and settings. In YAML it
// is one flat mapping: `name`, `protocol`, `rmw` (RMW), and the
// protocol's settings (`{name: glob, protocol: lease, lease_length:
// 60s}`), decoded strictly
// against that protocol's settings: a setting it does not have is an error
// naming it and listing the valid ones.
type KeyspacePolicy struct {
	Name     string // default keyspace: "default"
	Protocol string // a registered protocol (lightcone protocols); default quorum
	// RMW is how the RESP front end runs read-modify-write commands (INCR,
	// SET NX, HSET, ...): "" or "atomic" (default), as conditional
	// writes, which only protocols that order a key's writes apply (the
	// others refuse the commands, naming those that do); or
	// "last_writer_wins", a get then a put that two clients can both win
	// (the keyspace opts in to losing updates). YAML key `rmw`.
	RMW string
	// Settings, if set, are typed settings to start from (a pointer to
	// the protocol's settings struct), for configurations built in code.
	Settings any
	// Set are "name=value" settings (value in YAML syntax) applied last.
	Set []string
	// settings are the YAML mapping's other keys.
	settings *yaml.Node
}

// MarshalYAML writes the policy as the flat mapping UnmarshalYAML reads:
// name, protocol, the typed settings' non-zero fields, the YAML settings,
// then Set (for cluster files written by tools).
func (p KeyspacePolicy) MarshalYAML() (any, error) {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	add := func(k string, v *yaml.Node) {
		out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, v)
	}
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	if p.Name != "" {
		add("name", str(p.Name))
	}
	if p.Protocol != "" {
		add("protocol", str(p.Protocol))
	}
	if p.RMW != "" {
		add("rmw", str(p.RMW))
	}
	if p.Settings != nil {
		n, err := protocol.EncodeNonZero(p.Settings)
		if err != nil {
			return nil, err
		}
		out.Content = append(out.Content, n.Content...)
	}
	if p.settings != nil {
		out.Content = append(out.Content, p.settings.Content...)
	}
	for _, kv := range p.Set {
		k, v, _ := strings.Cut(kv, "=")
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(v), &n); err != nil || len(n.Content) == 0 {
			return nil, fmt.Errorf("keyspace %s: setting %q: want name=value", p.Name, kv)
		}
		add(strings.TrimSpace(k), n.Content[0])
	}
	return out, nil
}

// Spec is the policy's protocol and settings, as the registry builds them
// (for tools that check a keyspace's claims: its model, its clock bound).
func (p KeyspacePolicy) Spec() protocol.Spec {
	return protocol.Spec{Protocol: p.Protocol, Settings: p.Settings, YAML: p.settings, Set: p.Set}
}

// UnmarshalYAML splits a keyspace mapping into its name, protocol and
// settings; the settings are decoded when the keyspace is built.
func (p *KeyspacePolicy) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a keyspace is a mapping (name, protocol and its settings)", n.Line)
	}
	rest := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "name":
			if err := v.Decode(&p.Name); err != nil {
				return err
			}
		case "protocol":
			if err := v.Decode(&p.Protocol); err != nil {
				return err
			}
		case "rmw":
			if err := v.Decode(&p.RMW); err != nil {
				return err
			}
		default:
			rest.Content = append(rest.Content, k, v)
		}
	}
	if len(rest.Content) > 0 {
		p.settings = rest
	}
	// Decoded now too, so that a setting's error names its line.
	if _, _, err := p.Spec().Resolve(); err != nil {
		return err
	}
	return nil
}

// servedKeyspace is a built keyspace.
type servedKeyspace struct {
	name     string
	factory  env.Factory
	protocol string // its registered protocol
	policy   string
	// condRefusal answers conditional writes the protocol cannot apply
	// (protocol.CondRefusal); lww: rmw: last_writer_wins.
	condRefusal *wire.Error
	// txnRefusal answers transactions the protocol cannot run
	// (protocol.TxnRefusal).
	txnRefusal *wire.Error
	lww        bool
	lister     protocol.Lister // nil if the protocol cannot list its keys
}

// RMW modes (KeyspacePolicy.RMW).
const (
	RMWAtomic         = "atomic"
	RMWLastWriterWins = "last_writer_wins"
)

// buildKeyspaces builds the default keyspace and the others, in order.
func (c *Config) buildKeyspaces(tp *topo.Topology) ([]servedKeyspace, error) {
	def := c.Keyspace
	if def.Name == "" {
		def.Name = DefaultKeyspace
	}
	// The default keyspace's levels, when given apart from it (--read,
	// --write), are its read and write settings.
	if c.Read != "" {
		def.Set = append(def.Set, "read="+c.Read)
	}
	if c.Write != "" {
		def.Set = append(def.Set, "write="+c.Write)
	}
	var out []servedKeyspace
	for i, p := range append([]KeyspacePolicy{def}, c.Keyspaces...) {
		field := "keyspace"
		if i > 0 {
			field = fmt.Sprintf("keyspaces[%d]", i-1)
		}
		if p.Name == "" {
			return nil, fmt.Errorf("%s.name: required", field)
		}
		for _, o := range out {
			if o.name == p.Name {
				return nil, fmt.Errorf("%s.name: %q is already a keyspace", field, p.Name)
			}
		}
		if p.RMW != "" && p.RMW != RMWAtomic && p.RMW != RMWLastWriterWins {
			return nil, fmt.Errorf("%s.rmw: %q; valid: %s (default), %s", field, p.RMW, RMWAtomic, RMWLastWriterWins)
		}
		d, ks, err := p.Spec().Build(tp)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", field, p.Name, err)
		}
		lister, _ := ks.(protocol.Lister)
		out = append(out, servedKeyspace{name: p.Name, factory: ks.Factory(), protocol: d.Name, policy: ks.Describe(),
			condRefusal: protocol.CondRefusal(d, ks), txnRefusal: protocol.TxnRefusal(d, ks), lww: p.RMW == RMWLastWriterWins, lister: lister})
	}
	return out, nil
}

// PeerRTT is a link's measured round trips, as /status reports them.
type PeerRTT struct {
	Count  int64   `json:"count"`
	LastMs float64 `json:"last_ms"`
	MinMs  float64 `json:"min_ms"`
	MaxMs  float64 `json:"max_ms"`
	MeanMs float64 `json:"mean_ms"`
	StdMs  float64 `json:"std_ms"`
}

// Addrs are the addresses a running server listens on.
type Addrs struct {
	RESP, GRPC, HTTP, Peer string
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
	if c.GRPCAddr == "" {
		c.GRPCAddr = DefaultGRPCAddr
	}
	if c.Sync == "" {
		c.Sync = disk.SyncAlways
	}
}

// singleNodeWorld is the world of a standalone server: one region, one node.
func singleNodeWorld() (*topo.World, error) {
	return topo.Parse([]byte("name: standalone\ndescription: a single node\nnodes_per_region: 1\nregions: [{name: local, provider: local}]\n"))
}

// layout is what Run derives from the config: the topology, this node's
// ID, and every node's peer address.
type layout struct {
	topo  *topo.Topology
	self  wire.NodeID
	peers map[wire.NodeID]string
	wan   bool
	name  string
}

func (c *Config) layout() (*layout, error) {
	if c.Cluster == nil {
		w, err := singleNodeWorld()
		if err != nil {
			return nil, err
		}
		return &layout{topo: topo.NewTopology(w), name: "standalone"}, nil
	}
	cl := c.Cluster
	w, err := topo.Resolve(cl.World)
	if err != nil {
		return nil, fmt.Errorf("cluster.world: %w", err)
	}
	tp := topo.NewTopology(w)
	l := &layout{topo: tp, self: -1, peers: map[wire.NodeID]string{}, wan: cl.WANEmulation, name: cl.Name}
	if l.name == "" {
		l.name = "lightcone"
	}
	var names []string
	for _, n := range tp.Nodes {
		names = append(names, n.Name)
		a, ok := cl.Nodes[n.Name]
		if !ok || a.Peer == "" {
			return nil, fmt.Errorf("cluster.nodes: no peer address for node %q (the world %q has nodes %s)", n.Name, w.Name, strings.Join(names, ", "))
		}
		l.peers[n.ID] = a.Peer
		if n.Name == c.Node {
			l.self = n.ID
			if c.RESPAddr == "" {
				c.RESPAddr = a.RESP
			}
			if c.HTTPAddr == "" {
				c.HTTPAddr = a.HTTP
			}
			if c.GRPCAddr == "" {
				c.GRPCAddr = a.GRPC
			}
			if c.PeerAddr == "" {
				c.PeerAddr = a.Peer
			}
		}
	}
	for name := range cl.Nodes {
		if !slices.Contains(names, name) {
			return nil, fmt.Errorf("cluster.nodes: %q is not a node of world %q (nodes: %s)", name, w.Name, strings.Join(names, ", "))
		}
	}
	if l.self < 0 {
		return nil, fmt.Errorf("node: %q is not a node of the cluster (nodes: %s)", c.Node, strings.Join(names, ", "))
	}
	return l, nil
}

// Run serves until ctx is cancelled, then shuts down cleanly: front ends
// stop accepting, in-flight requests finish or fail, the store syncs and
// closes.
func Run(ctx context.Context, cfg Config) (err error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	lay, err := cfg.layout()
	if err != nil {
		return err
	}
	cfg.EnsureDefaults()
	policy, err := disk.ParseSyncPolicy(string(cfg.Sync))
	if err != nil {
		return err
	}
	if (cfg.FaultInjection || cfg.Pprof) && cfg.Token == "" && !loopbackAddr(cfg.HTTPAddr) {
		return fmt.Errorf("fault_injection and pprof on a non-loopback http_addr (%s) need a token: anyone who reaches it could partition the node or read its command line", cfg.HTTPAddr)
	}
	if err := (resp.Config{QueryBufferLimit: int64(cfg.ClientQueryBufferLimit), BufferBudget: int64(cfg.ClientBufferBudget)}).Validate(); err != nil {
		return err
	}
	for name, b := range cfg.StorageServices { // lint:order-independent: a check
		if b.Faults != nil && !cfg.FaultInjection {
			return fmt.Errorf("storage_services.%s.faults needs fault_injection (it breaks the service on purpose)", name)
		}
	}
	if cfg.ClockOffset != 0 && !cfg.FaultInjection {
		return errors.New("clock_offset needs fault_injection (it is a test's stepped clock)")
	}
	selfName := lay.topo.Nodes[lay.self].Name
	clientTLS, err := cfg.ClientTLS.clientTLS(selfName)
	if err != nil {
		return err
	}
	peerTLS, err := cfg.PeerTLS.peerTLS(selfName)
	if err != nil {
		return err
	}
	tp := lay.topo
	lat := &measuredLatency{self: lay.self, topo: tp}
	keyspaces, err := cfg.buildKeyspaces(tp)
	if err != nil {
		return err
	}
	// Every node runs its keyspaces behind the keyspace mux, so a request
	// naming a keyspace the cluster lacks is refused rather than served by
	// another one.
	var defs []keyspace.Def
	var ksNames, ksProtocols []string
	for _, k := range keyspaces {
		defs = append(defs, keyspace.Def{Name: k.name, Factory: k.factory, CondRefusal: k.condRefusal, TxnRefusal: k.txnRefusal})
		ksNames = append(ksNames, k.name)
		ksProtocols = append(ksProtocols, k.protocol)
	}
	// The node's protocols: each keyspace's, the default keyspace's first.
	nodeProtocols := strings.Join(ksProtocols, ",")
	factory, err := keyspace.NewFactory(defs)
	if err != nil {
		return err
	}
	inner, err := protocol.NewCodec()
	if err != nil {
		return err
	}
	// Envelopes around the protocols' messages, and the storage-service
	// router's own (forwarded calls to hosted services).
	codec, err := wire.NewCodec(keyspace.MessageTypes(inner), svchost.MessageTypes())
	if err != nil {
		return err
	}
	// The ports are bound before the data directory is touched: a busy
	// port fails the start before it leaves anything behind.
	ls, err := bindListeners(&cfg, clientTLS)
	if err != nil {
		return err
	}
	defer ls.close()
	dir, err := openDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	// Deferred first, run last: once the store is closed and unlocked, a
	// start that failed removes the directory it created.
	started := false
	defer func() {
		if err != nil && !started {
			err = errors.Join(err, dir.remove())
		}
	}()
	defer func() { err = errors.Join(err, dir.close()) }()
	// Before the engine opens: with SpareProc it raises GOMAXPROCS while it
	// compacts, maybe already.
	procs := runtime.GOMAXPROCS(0)
	eng, err := disk.Open(cfg.DataDir, disk.Options{Sync: policy, FS: cfg.FS, ReserveBytes: cfg.DiskReserve, Log: log, FsyncHoldsThread: cfg.FsyncHoldsThread, RowCacheBytes: cfg.RowCacheSize, SpareProc: cfg.SpareProc})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, eng.Close()) }()

	me := tp.Nodes[lay.self]
	region := tp.World.Regions[me.Region].Name
	m := metrics.New(metrics.Labels{Node: me.Name, Region: region, Keyspace: strings.Join(ksNames, ","), Protocol: nodeProtocols})
	eng.SyncLatency = m.Fsync // real fsyncs only (policy always)
	ncfg := node.Config{Procs: procs, ID: lay.self, Topology: tp, Factory: factory, Engine: eng, Observer: m, Log: log, Latency: lat.latency,
		Admit: func(*wire.Request) *wire.Error { return admitWrite(eng) },
		// A sync is an fsync only under always: there reads answered from
		// the store need not wait for the writes handled beside them.
		EarlyReads: policy == disk.SyncAlways,
		// GETs of keys the loop answered skip it while the answer stands.
		PublishReads: !cfg.NoPublishedReads, Keyspaces: ksNames}
	var clock *node.SteppableClock
	if cfg.FaultInjection {
		clock = &node.SteppableClock{Base: node.SystemClock{}}
		clock.Step(cfg.ClockOffset)
		ncfg.Clock = clock
	}
	var nd *node.Node
	var tr *transport.Transport
	svcCfg := svchost.Config{Self: lay.self, Topology: tp, Backends: cfg.StorageServices, Log: log,
		Dir: filepath.Join(cfg.DataDir, "services"), WAN: lay.wan,
		Deliver: func(from wire.NodeID, msg wire.Msg) { nd.Deliver(from, msg) }, Meter: storageMeter(tp.World, m)}
	if lay.peers != nil {
		svcCfg.Send = func(to wire.NodeID, msg wire.Msg) { tr.Send(to, msg) }
	}
	services, err := svchost.New(svcCfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, services.Close()) }()
	ncfg.Services = services
	if lay.peers != nil {
		tcfg := transport.Config{Self: lay.self, Cluster: lay.name, Listen: cfg.PeerAddr, Peers: lay.peers, Codec: codec,
			Deliver: func(from wire.NodeID, msg wire.Msg) {
				if !services.HandlePeer(from, msg) {
					nd.Deliver(from, msg)
				}
			}, Observer: m, Log: log, TLS: peerTLS,
			Names: nodeNames(tp), PingInterval: cfg.PingInterval}
		if lay.wan {
			tcfg.WAN = &transport.WAN{Topology: tp, Seed: uint64(time.Now().UnixNano())}
		}
		// The node must exist before messages arrive: build it first.
		ncfg.Transport = lazyTransport{&tr}
		if nd, err = node.New(ncfg); err != nil {
			return err
		}
		if tr, err = transport.New(tcfg); err != nil {
			return err
		}
		defer tr.Close()
		lat.set(tr)
	} else if nd, err = node.New(ncfg); err != nil {
		return err
	}
	exportKeyspaceStats(m, nd, keyspaces)
	m.GaugeFunc("lightcone_published_reads", "Replies kept for reads answered without the event loop.",
		func() float64 { k, _ := nd.PublishedStats(); return float64(k) })
	m.GaugeFunc("lightcone_published_read_bytes", "Key and value bytes of the replies kept for reads answered without the event loop.",
		func() float64 { _, b := nd.PublishedStats(); return float64(b) })
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

	if l := ls.resp; l != nil {
		rs := resp.NewServer(resp.Config{Addr: cfg.RESPAddr, Keyspace: ksNames[0], Keyspaces: ksNames, RequirePass: cfg.RequirePass, Log: log,
			LastWriterWins: func(name string) bool {
				i := slices.IndexFunc(keyspaces, func(k servedKeyspace) bool { return k.name == name })
				return i >= 0 && keyspaces[i].lww
			},
			Scanner:    newNodeScanner(nd, eng, keyspaces),
			MaxClients: maxClients(cfg.MaxClients, log), EventLoops: cfg.RESPEventLoops, QueryBufferLimit: int64(cfg.ClientQueryBufferLimit),
			OutputBufferLimit: int64(cfg.ClientOutputBufferLimit), BufferBudget: int64(cfg.ClientBufferBudget),
			Info: func() map[string]string {
				sp := eng.Space()
				return map[string]string{"lightcone_protocol": keyspaces[0].protocol, "lightcone_keyspaces": keyspaceList(keyspaces), "lightcone_sync": string(policy), "lightcone_data_dir": cfg.DataDir,
					"lightcone_disk_writable": boolDigit(sp.Writable), "lightcone_disk_avail_bytes": strconv.FormatUint(sp.AvailBytes, 10),
					"lightcone_disk_reserve_bytes": strconv.FormatUint(sp.ReserveBytes, 10), "lightcone_disk_writes_refused": strconv.FormatInt(sp.Refused, 10)}
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
	if l := ls.grpc; l != nil {
		var opts []grpc.ServerOption
		if clientTLS != nil {
			opts = append(opts, grpc.Creds(credentials.NewTLS(clientTLS)))
		}
		gs := grpcapi.NewServer(grpcapi.Config{Keyspace: ksNames[0], Token: cfg.Token, Log: log,
			HasKeyspace: func(name string) bool { return slices.Contains(ksNames, name) },
			Status: func() *lightconev1.StatusResponse {
				return &lightconev1.StatusResponse{Node: me.Name, Region: region, Protocol: nodeProtocols, Version: Version,
					Keyspaces: keyspaceStatus(nd, keyspaces, log)}
			}}, nd, opts...)
		addrs.GRPC = l.Addr().String()
		closers = append(closers, func() error { gs.GracefulStop(); return nil })
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := gs.Serve(l); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				log.Error("server: grpc", "err", err)
				cancel()
			}
		}()
	}
	if l := ls.http; l != nil {
		hs := admin.NewServer(cfg.HTTPAddr, admin.Config{
			Metrics: m, Token: cfg.Token, Log: log,
			Ready: func() error { return ready(ctx, eng.Writable, nd) },
			Status: func() any {
				st := map[string]any{"node": me.Name, "region": region, "cluster": lay.name, "protocol": keyspaces[0].protocol,
					"sync": policy, "fsync_holds_thread": cfg.FsyncHoldsThread, "row_cache_bytes": eng.RowCacheBytes(), "spare_proc": eng.SpareProc(), "published_reads": !cfg.NoPublishedReads, "data_dir": cfg.DataDir, "resp_addr": addrs.RESP, "disk": eng.Space(),
					"keyspaces": keyspaceDetails(ctx, nd, keyspaces, log)}
				if tr != nil {
					st["peer_addr"] = tr.Addr()
					st["messages_dropped"] = tr.Dropped()
					st["wan_emulation"] = lay.wan
					var blocked []string
					for _, id := range tr.Blocked() {
						blocked = append(blocked, tp.Nodes[id].Name)
					}
					st["blocked_peers"] = blocked
					rtts := map[string]PeerRTT{}
					for id, r := range tr.RTTs() {
						ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
						rtts[tp.Nodes[id].Name] = PeerRTT{Count: r.Count, LastMs: ms(r.Last), MinMs: ms(r.Min), MaxMs: ms(r.Max), MeanMs: ms(r.Mean), StdMs: ms(r.Std)}
					}
					st["peer_rtt"] = rtts
				}
				return st
			},
		})
		if cfg.FaultInjection {
			hs.Handler = faultHandler(hs.Handler, tr, clock, tp, cfg.Token)
		}
		if cfg.Pprof {
			hs.Handler = pprofHandler(hs.Handler, cfg.Token)
			hs.WriteTimeout = 0 // profiles stream for as long as asked
		}
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
	if tr != nil {
		addrs.Peer = tr.Addr()
	}
	started = true
	log.Info("lightcone server ready", "node", me.Name, "resp", addrs.RESP, "grpc", addrs.GRPC, "http", addrs.HTTP, "peer", addrs.Peer, "data_dir", cfg.DataDir, "sync", policy)
	if cfg.Ready != nil {
		cfg.Ready(addrs)
	}
	<-ctx.Done()
	log.Info("lightcone server stopping")
	return nil
}

// admitWrite refuses a client write while the engine cannot take it: a
// full disk is wire.ErrNoSpace (retryable once space is freed), a failed
// engine wire.ErrUnavailable.
func admitWrite(eng *disk.Pebble) *wire.Error {
	err := eng.AdmitWrite()
	if err == nil {
		return nil
	}
	var full *disk.NoSpaceError
	if errors.As(err, &full) {
		return &wire.Error{Code: wire.ErrNoSpace, Msg: err.Error()}
	}
	return &wire.Error{Code: wire.ErrUnavailable, Msg: err.Error()}
}

// lazyTransport lets the node be built before its transport exists.
type lazyTransport struct{ t **transport.Transport }

func (l lazyTransport) Send(to wire.NodeID, m wire.Msg) { (*l.t).Send(to, m) }

// faultHandler adds to the admin endpoint POST /debug/transport?block=NODE
// or ?unblock=NODE (or ?unblock=all), with which the transport drops all
// traffic to and from the named peers, isolating this node without
// touching the OS (cluster nodes only); and POST /debug/clock?step=DURATION
// (Go syntax, signed: -1.5s, +20ms), which steps the node's wall clock
// (env.Env.Wall; Env.Now never steps) and replies its offset from the
// system clock.
func faultHandler(next http.Handler, tr *transport.Transport, clock *node.SteppableClock, tp *topo.Topology, token string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", next)
	// post admits an authorized POST.
	post := func(w http.ResponseWriter, r *http.Request) bool {
		if token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+token)) != 1 {
			http.Error(w, `{"error":"admin: missing or wrong bearer token"}`, http.StatusUnauthorized)
			return false
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, `{"error":"admin: POST only"}`, http.StatusMethodNotAllowed)
			return false
		}
		return true
	}
	mux.HandleFunc("/debug/clock", func(w http.ResponseWriter, r *http.Request) {
		if !post(w, r) {
			return
		}
		d, err := time.ParseDuration(strings.TrimPrefix(r.URL.Query().Get("step"), "+"))
		if err != nil {
			http.Error(w, fmt.Sprintf(`{"error":"admin: step: want a signed duration such as +2s or -150ms: %v"}`, err), http.StatusBadRequest)
			return
		}
		off := clock.Step(d)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"offset_ns\": %d}\n", off.Nanoseconds())
	})
	if tr == nil {
		return mux
	}
	mux.HandleFunc("/debug/transport", func(w http.ResponseWriter, r *http.Request) {
		if !post(w, r) {
			return
		}
		find := func(name string) (wire.NodeID, bool) {
			for _, n := range tp.Nodes {
				if n.Name == name {
					return n.ID, true
				}
			}
			return 0, false
		}
		q := r.URL.Query()
		for _, name := range q["block"] {
			id, ok := find(name)
			if !ok {
				http.Error(w, fmt.Sprintf(`{"error":"admin: unknown node %q"}`, name), http.StatusBadRequest)
				return
			}
			tr.Block(id)
		}
		for _, name := range q["unblock"] {
			if name == "all" {
				for _, id := range tr.Blocked() {
					tr.Unblock(id)
				}
				continue
			}
			id, ok := find(name)
			if !ok {
				http.Error(w, fmt.Sprintf(`{"error":"admin: unknown node %q"}`, name), http.StatusBadRequest)
				return
			}
			tr.Unblock(id)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"blocked\": %d}\n", len(tr.Blocked()))
	})
	return mux
}

// listeners are the front ends' sockets (nil: "off").
type listeners struct{ resp, grpc, http net.Listener }

// bindListeners binds the front ends' addresses, or none of them.
func bindListeners(cfg *Config, clientTLS *tls.Config) (ls listeners, err error) {
	defer func() {
		if err != nil {
			ls.close()
		}
	}()
	for _, b := range []struct {
		l          *net.Listener
		addr, name string
		tls        *tls.Config
	}{{&ls.resp, cfg.RESPAddr, "resp_addr", clientTLS}, {&ls.grpc, cfg.GRPCAddr, "grpc_addr", nil}, {&ls.http, cfg.HTTPAddr, "http_addr", clientTLS}} {
		if b.addr == "off" {
			continue
		}
		l, err := listen(b.addr, b.tls)
		if err != nil {
			return ls, fmt.Errorf("%s: %w", b.name, err)
		}
		*b.l = l
	}
	return ls, nil
}

// close closes the sockets no server has taken over (a server's own
// close closes its socket; closing one twice does nothing).
func (ls listeners) close() {
	for _, l := range []net.Listener{ls.resp, ls.grpc, ls.http} {
		if l != nil {
			_ = l.Close()
		}
	}
}

func listen(addr string, c *tls.Config) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil || c == nil {
		return l, err
	}
	return tlsListener{tls.NewListener(l, c), l.(*net.TCPListener)}, nil
}

// tlsListener is a TLS listener that takes an accept deadline, as its TCP
// listener does (the RESP server's refusal of clients when descriptors
// run out waits for one with a deadline).
type tlsListener struct {
	net.Listener
	tcp *net.TCPListener
}

func (l tlsListener) SetDeadline(t time.Time) error { return l.tcp.SetDeadline(t) }

// pprofHandler adds Go's profiler under /debug/pprof/.
func pprofHandler(next http.Handler, token string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", next)
	prof := http.NewServeMux()
	prof.HandleFunc("/debug/pprof/", pprof.Index)
	prof.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	prof.HandleFunc("/debug/pprof/profile", pprof.Profile)
	prof.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	prof.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/debug/pprof/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+token)) != 1 {
			http.Error(w, `{"error":"admin: missing or wrong bearer token"}`, http.StatusUnauthorized)
			return
		}
		prof.ServeHTTP(w, r)
	}))
	return mux
}

// KeyspaceDetail is one keyspace on /status: its name and policy and, for a
// lease or meteor keyspace, this node's protocol counters.
type KeyspaceDetail struct {
	Name     string `json:"name"`
	Protocol string `json:"protocol"`
	Policy   string `json:"policy"`
	// Counters are the protocol's counters and gauges on this node, by
	// the names of the lightcone_<protocol>_* metrics without the prefix.
	Counters map[string]float64 `json:"counters,omitempty"`
}

// keyspaceList is "name=protocol,..." in configuration order.
func keyspaceList(kss []servedKeyspace) string {
	var parts []string
	for _, k := range kss {
		parts = append(parts, k.name+"="+k.protocol)
	}
	return strings.Join(parts, ",")
}

// keyspaceCounters reads every keyspace's protocol counters from the
// event loop, by keyspace and counter name (left out, and logged as what,
// if the loop does not answer in time).
func keyspaceCounters(ctx context.Context, nd *node.Node, kss []servedKeyspace, log *slog.Logger, what string) map[string]map[string]float64 {
	names := make([]string, len(kss))
	for i, k := range kss {
		names[i] = k.name
	}
	ctx, cancel := context.WithTimeout(ctx, statsWait)
	defer cancel()
	stats, err := keyspaceStats(ctx, nd, names)
	if err != nil {
		log.Warn("server: "+what+": keyspace counters", "err", err)
	}
	out := make(map[string]map[string]float64, len(stats))
	for ks, cs := range stats {
		if len(cs) == 0 {
			continue
		}
		m := make(map[string]float64, len(cs))
		for _, c := range cs {
			m[c.Name] = c.Value
		}
		out[ks] = m
	}
	return out
}

// keyspaceDetails lists the keyspaces for /status, sorted by name, with
// their protocols' counters.
func keyspaceDetails(ctx context.Context, nd *node.Node, kss []servedKeyspace, log *slog.Logger) []KeyspaceDetail {
	counters := keyspaceCounters(ctx, nd, kss, log, "status")
	var out []KeyspaceDetail
	for _, k := range kss {
		out = append(out, KeyspaceDetail{Name: k.name, Protocol: k.protocol, Policy: k.policy, Counters: counters[k.name]})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// keyspaceStatus is the keyspaces for gRPC Status, sorted by name, with
// their protocols' counters named as the lightcone_* metrics without the
// prefix (lease_grants_total).
func keyspaceStatus(nd *node.Node, kss []servedKeyspace, log *slog.Logger) []*lightconev1.KeyspaceStatus {
	counters := keyspaceCounters(context.Background(), nd, kss, log, "grpc status")
	var out []*lightconev1.KeyspaceStatus
	for _, k := range kss {
		ks := &lightconev1.KeyspaceStatus{Name: k.name, Policy: k.policy}
		if cs := counters[k.name]; len(cs) > 0 {
			ks.Counters = make(map[string]float64, len(cs))
			for name, v := range cs {
				ks.Counters[k.protocol+"_"+name] = v
			}
		}
		out = append(out, ks)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// loopbackAddr reports whether addr listens on loopback only.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// maxClients fits the RESP client limit to the open file limit, and says
// so when it lowers it, as Redis does at startup.
func maxClients(want int, log *slog.Logger) int {
	if want <= 0 {
		want = resp.DefaultMaxClients
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		log.Warn("server: cannot read the open file limit; maxclients not fitted to it", "err", err, "maxclients", want)
		return want
	}
	n := resp.MaxClientsFor(want, rl.Cur)
	if n < want {
		log.Warn("server: maxclients lowered to fit the open file limit (raise it with ulimit -n)", "maxclients", n, "wanted", want, "rlimit_nofile", rl.Cur, "reserved_fds", resp.ReservedFDs)
	}
	return n
}

// loopDeadline is how long /readyz waits for the node's event loop to run
// an empty task before it calls the node stalled.
const loopDeadline = 2 * time.Second

// ready is /readyz's verdict: the disk takes writes, and the node's event
// loop answers within loopDeadline. A loop stuck behind a stalled commit
// (flushes failing for a reason other than space) or one that has stopped
// makes the node not ready, instead of hanging every client while /readyz
// says ok.
func ready(ctx context.Context, writable func() error, nd *node.Node) error {
	if err := writable(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, loopDeadline)
	defer cancel()
	if err := nd.Do(ctx, func() {}); err != nil {
		return fmt.Errorf("the node's event loop has not answered in %v (stalled or stopped): %w", loopDeadline, err)
	}
	return nil
}

// boolDigit is INFO's way of saying yes or no.
func boolDigit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// storageMeter is the cost accountant of the storage requests this node's
// router executes, exposed on the node's /metrics
// (lightcone_storage_requests_total{region,op} and the rest: cost.Collector).
func storageMeter(w *topo.World, m *metrics.Metrics) *cost.Accountant {
	names := make([]string, len(w.Regions))
	for i, r := range w.Regions {
		names[i] = r.Name
	}
	acc := cost.NewAccountant(names)
	m.Registry().MustRegister(acc.Collector())
	return acc
}
