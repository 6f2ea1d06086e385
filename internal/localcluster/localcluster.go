// Package localcluster starts a real multi-region Lightcone cluster on
// loopback: one `lightcone server` process per node of a world, with WAN
// emulation holding every message between regions for the world's delay.
// `lightcone demo` and the bench harness run their experiments on it.
//
// Processes never outlive their parent (Pdeathsig) and Stop ends every one
// of them, so a test or an interrupted run leaves nothing behind.
package localcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/server"
	"github.com/lightcone/lightcone/internal/store/disk"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// stopGrace is how long Stop waits after SIGTERM before it sends SIGKILL.
const stopGrace = 5 * time.Second

// Options configures a local cluster. Zero fields take the defaults noted.
type Options struct {
	// World is the cluster's world, NodesPerRegion included. Required.
	World *topo.World
	// Binary is the lightcone executable run as `Binary server ...`.
	// Default: this executable (os.Executable).
	Binary string
	// Dir holds the world and cluster YAML, each node's data directory and
	// each node's log (<node>.log). Default: a new temporary directory,
	// removed by Stop unless Keep. A directory the caller names is never
	// removed.
	Dir string
	// Keep keeps the default temporary directory after Stop.
	Keep bool
	// Sync is the nodes' sync policy: always, everysec or never. Default
	// everysec.
	Sync string
	// ReplicasPerRegion is the default keyspace's replicas in each region,
	// between 1 and World.NodesPerRegion. Default 1.
	ReplicasPerRegion int
	// Read and Write are the default keyspace's consistency levels (as
	// wire.ParseLevel accepts them). Default: the protocol's (QUORUM).
	Read, Write string
	// Keyspaces are further keyspaces every node serves beside the default
	// one (server.Config.Keyspaces), e.g. a lease keyspace.
	Keyspaces []server.KeyspacePolicy
	// StartTimeout bounds how long Start waits for the cluster to be ready.
	// Default 30s.
	StartTimeout time.Duration
	// ServerArgs are extra `lightcone server` flags for every node (e.g.
	// --ping-interval 100ms).
	ServerArgs []string
	// Log receives progress lines (starting, ready, kept directory).
	// Default: discarded.
	Log io.Writer
}

func (o *Options) ensureDefaults() error {
	if o.World == nil {
		return errors.New("localcluster: no world")
	}
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("localcluster: binary: %w", err)
		}
		o.Binary = exe
	}
	if o.Sync == "" {
		o.Sync = string(disk.SyncEverySec)
	}
	if o.ReplicasPerRegion == 0 {
		o.ReplicasPerRegion = 1
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.World.NodesPerRegion < 1 {
		return fmt.Errorf("localcluster: world %s: nodes per region %d; must be at least 1", o.World.Name, o.World.NodesPerRegion)
	}
	if o.ReplicasPerRegion < 1 || o.ReplicasPerRegion > o.World.NodesPerRegion {
		return fmt.Errorf("localcluster: replicas per region %d; must be between 1 and the world's %d nodes per region", o.ReplicasPerRegion, o.World.NodesPerRegion)
	}
	if _, err := disk.ParseSyncPolicy(o.Sync); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	for _, l := range []string{o.Read, o.Write} {
		if l == "" {
			continue
		}
		if _, err := wire.ParseLevel(l); err != nil {
			return fmt.Errorf("localcluster: %w", err)
		}
	}
	return nil
}

// BuildBinary builds the lightcone command into dir and returns its path
// (for tests, whose own executable is not the server).
func BuildBinary(dir string) (string, error) {
	bin := filepath.Join(dir, "lightcone")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/lightcone/lightcone/cmd/lightcone").CombinedOutput(); err != nil {
		return "", fmt.Errorf("localcluster: go build: %w\n%s", err, out)
	}
	return bin, nil
}

// Node is one running server process and a client of its RESP endpoint.
type Node struct {
	Name   string // <region>-<i>
	Region int    // index into the world's regions
	// Listen addresses on loopback.
	RESP, HTTP, GRPC, Peer string
	// Client talks RESP2 to the node, never retries (a retry would hide a
	// failure and its latency), and honours context deadlines. Stop closes
	// it.
	Client *redis.Client
}

// Cluster is a running local cluster.
type Cluster struct {
	opts    Options
	dir     string
	ownDir  bool
	cfgPath string
	nodes   []Node

	mu    sync.Mutex // guards procs (Restart replaces one)
	procs []*proc

	stopOnce sync.Once
}

// proc is one server process.
type proc struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{} // closed once Wait returns
	err    error         // Wait's result, set before exited is closed
}

// Start writes the world and cluster YAML, starts one server process per
// node and returns once an ALL write from every node succeeds (so every
// peer link is up). On any error, ctx cancellation included, it stops every
// process it started before returning. ctx bounds only the start: the
// cluster runs until Stop.
func Start(ctx context.Context, o Options) (c *Cluster, err error) {
	if err := o.ensureDefaults(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("localcluster: start: %w", err)
	}
	c = &Cluster{opts: o, dir: o.Dir}
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "lightcone-cluster-"); err != nil {
			return nil, fmt.Errorf("localcluster: %w", err)
		}
		c.ownDir = true
	} else if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	defer func() {
		if err != nil {
			c.Stop()
			c = nil
		}
	}()
	cfgPath, err := c.writeConfig()
	if err != nil {
		return c, err
	}
	c.cfgPath = cfgPath
	fmt.Fprintf(o.Log, "starting %d nodes (config %s)...\n", len(c.nodes), cfgPath)
	for i := range c.nodes {
		if err := ctx.Err(); err != nil {
			return c, fmt.Errorf("localcluster: start: %w", err)
		}
		if err := c.spawn(i); err != nil {
			return c, err
		}
		n := &c.nodes[i]
		n.Client = redis.NewClient(&redis.Options{Addr: n.RESP, Protocol: 2, MaxRetries: -1,
			ReadTimeout: 30 * time.Second, ContextTimeoutEnabled: true})
	}
	if err := c.waitReady(ctx); err != nil {
		return c, err
	}
	fmt.Fprintf(o.Log, "cluster up: %d nodes connected\n", len(c.nodes))
	return c, nil
}

// clusterFile is the YAML every node reads (server.Config's fields).
type clusterFile struct {
	Cluster   server.Cluster          `yaml:"cluster"`
	Keyspace  server.KeyspacePolicy   `yaml:"keyspace"`
	Keyspaces []server.KeyspacePolicy `yaml:"keyspaces,omitempty"`
	Sync      string                  `yaml:"sync"`
	Read      string                  `yaml:"read,omitempty"`
	Write     string                  `yaml:"write,omitempty"`
}

// writeConfig picks every node's addresses and writes world.yaml and
// cluster.yaml into the directory.
func (c *Cluster) writeConfig() (string, error) {
	w := c.opts.World
	worldPath := filepath.Join(c.dir, "world.yaml")
	wb, err := yaml.Marshal(w)
	if err != nil {
		return "", fmt.Errorf("localcluster: world: %w", err)
	}
	if err := os.WriteFile(worldPath, wb, 0o644); err != nil {
		return "", fmt.Errorf("localcluster: %w", err)
	}
	f := clusterFile{
		Cluster: server.Cluster{Name: "local", World: worldPath, WANEmulation: true, Nodes: map[string]server.NodeAddrs{}},
		Sync:    c.opts.Sync, Read: c.opts.Read, Write: c.opts.Write, Keyspaces: c.opts.Keyspaces,
	}
	// The default keyspace has the registry's default protocol.
	f.Keyspace.Set = []string{fmt.Sprintf("replicas_per_region=%d", c.opts.ReplicasPerRegion)}
	// Hold every port until all are chosen: a port just closed can be
	// handed out again, and two listeners sharing one address would fail
	// (or, worse, one node's peer link would reach another's RESP port).
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	ports := newPortPicker()
	freeAddr := func() (string, error) {
		l, err := ports.listen()
		if err != nil {
			return "", fmt.Errorf("localcluster: free port: %w", err)
		}
		held = append(held, l)
		return l.Addr().String(), nil
	}
	for _, n := range topo.NewTopology(w).Nodes {
		nd := Node{Name: n.Name, Region: n.Region}
		for _, a := range []*string{&nd.Peer, &nd.RESP, &nd.HTTP, &nd.GRPC} {
			if *a, err = freeAddr(); err != nil {
				return "", err
			}
		}
		f.Cluster.Nodes[nd.Name] = server.NodeAddrs{Peer: nd.Peer, RESP: nd.RESP, GRPC: nd.GRPC, HTTP: nd.HTTP}
		c.nodes = append(c.nodes, nd)
	}
	cb, err := yaml.Marshal(&f)
	if err != nil {
		return "", fmt.Errorf("localcluster: cluster config: %w", err)
	}
	cfgPath := filepath.Join(c.dir, "cluster.yaml")
	if err := os.WriteFile(cfgPath, cb, 0o644); err != nil {
		return "", fmt.Errorf("localcluster: %w", err)
	}
	return cfgPath, nil
}

// portPicker chooses listen ports below the kernel's ephemeral range, so
// that the nodes started first cannot take a later node's port as the
// source port of an outgoing connection (which a port from bind(0), taken
// from that range, would risk).
type portPicker struct {
	rng           *rand.Rand
	lowest, limit int // candidates: [lowest, limit)
}

func newPortPicker() *portPicker {
	p := &portPicker{rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid()))), lowest: 20000}
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			p.limit, _ = strconv.Atoi(f[0])
		}
	}
	return p
}

// listen listens on a free loopback port: below the ephemeral range if
// there is room, else one the kernel picks.
// Ports this process handed out are never handed out again (given): the
// process a port was meant for may not have bound it yet, and a test that
// picks a cluster's addresses one FreeAddr at a time (each listener closed
// before the next pick) would otherwise get the same port twice now and
// then (TestDirectoryFailoverOnRealServers failed so in CI: "bind: address
// already in use").
var given struct {
	sync.Mutex
	ports map[int]bool
}

func (p *portPicker) listen() (net.Listener, error) {
	given.Lock()
	defer given.Unlock()
	if given.ports == nil {
		given.ports = map[int]bool{}
	}
	if p.limit-p.lowest >= 1000 {
		for range 100 {
			port := p.lowest + p.rng.IntN(p.limit-p.lowest)
			if given.ports[port] {
				continue
			}
			if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
				given.ports[port] = true
				return l, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err == nil {
		given.ports[l.Addr().(*net.TCPAddr).Port] = true
	}
	return l, err
}

// FreeAddr returns a loopback address whose port was free a moment ago,
// chosen below the kernel's ephemeral range (portPicker), for a process a
// test starts next. A port from bind(0) lies in that range, where any
// outgoing connection on the machine (other tests run in parallel) may
// take it as its source port before the process binds it; then the
// process fails to start, or another process answers in its place.
func FreeAddr() (string, error) {
	l, err := newPortPicker().listen()
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// spawn starts node i's process, appending to its log <dir>/<name>.log.
func (c *Cluster) spawn(i int, extra ...string) error {
	n := &c.nodes[i]
	logPath := filepath.Join(c.dir, n.Name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	// The child has its own copy of the descriptor once started.
	defer logf.Close()
	args := append([]string{"server", "--config", c.cfgPath, "--node", n.Name, "--data-dir", c.DataDir(i)}, c.opts.ServerArgs...)
	args = append(args, extra...)
	cmd := exec.Command(c.opts.Binary, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Never outlive this process, even if it is killed before Stop runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("localcluster: start %s: %w", n.Name, err)
	}
	p := &proc{name: n.Name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	if i < len(c.procs) {
		c.procs[i] = p
	} else {
		c.procs = append(c.procs, p)
	}
	return nil
}

// DataDir returns node i's data directory, <dir>/<name>. It exists once
// Start returns; a caller that names Options.Dir may prepare it before
// (mount a small file system there, say).
func (c *Cluster) DataDir(i int) string { return filepath.Join(c.dir, c.nodes[i].Name) }

// process returns node i's current process.
func (c *Cluster) process(i int) *proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.procs[i]
}

// Signal sends sig to node i's process: SIGSTOP and SIGCONT pause and
// resume it, SIGKILL crashes it (Kill also waits for the exit).
func (c *Cluster) Signal(i int, sig syscall.Signal) error {
	p := c.process(i)
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("localcluster: signal %s to %s: %w", sig, p.name, err)
	}
	return nil
}

// Kill crashes node i (SIGKILL, as kill -9) and returns once it has exited.
func (c *Cluster) Kill(i int) error {
	p := c.process(i)
	_ = p.cmd.Process.Signal(syscall.SIGKILL) // fails only if it already exited
	<-p.exited
	return nil
}

// Running reports whether node i's process has not exited.
func (c *Cluster) Running(i int) bool {
	select {
	case <-c.process(i).exited:
		return false
	default:
		return true
	}
}

// Restart starts node i's process again, with its configuration and data
// directory and any extra server flags, after it exited (Kill). It returns once the process serves
// RESP (a PING answers), or an error naming the log's last lines if it
// exits or ctx ends first. Its Node.Client reconnects by itself.
func (c *Cluster) Restart(ctx context.Context, i int, extra ...string) error {
	if c.Running(i) {
		return fmt.Errorf("localcluster: restart %s: still running", c.nodes[i].Name)
	}
	if err := c.spawn(i, extra...); err != nil {
		return err
	}
	n, p := c.nodes[i], c.process(i)
	rc := redis.NewClient(&redis.Options{Addr: n.RESP, Protocol: 2, MaxRetries: -1, PoolSize: 1,
		DialTimeout: time.Second, ReadTimeout: 2 * time.Second, ContextTimeoutEnabled: true})
	defer rc.Close()
	for rc.Ping(ctx).Err() != nil {
		select {
		case <-p.exited:
			return fmt.Errorf("localcluster: restarted node %s exited (%v); its log ends:\n%s", n.Name, p.err, tail(p.log, 10))
		case <-ctx.Done():
			return fmt.Errorf("localcluster: restart %s: %w", n.Name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// waitReady returns once an ALL write from every node succeeds.
func (c *Cluster) waitReady(parent context.Context) error {
	ctx, cancel := context.WithTimeout(parent, c.opts.StartTimeout)
	defer cancel()
	for i, n := range c.nodes {
		p := c.procs[i]
		// A client of its own, closed on cancellation, so that a request
		// blocked on a node that never answers cannot delay the return.
		rc := redis.NewClient(&redis.Options{Addr: n.RESP, Protocol: 2, MaxRetries: -1, PoolSize: 1,
			DialTimeout: time.Second, ReadTimeout: 5 * time.Second, ContextTimeoutEnabled: true})
		stop := context.AfterFunc(ctx, func() { _ = rc.Close() })
		err := func() error {
			for {
				if rc.Do(ctx, "LC.SET", "localcluster:ready:"+n.Name, "1", "LEVEL", "ALL").Err() == nil {
					return nil
				}
				select {
				case <-p.exited:
					return fmt.Errorf("localcluster: node %s exited (%v); its log ends:\n%s", n.Name, p.err, tail(p.log, 10))
				case <-ctx.Done():
					return c.readyErr(parent, n.Name)
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
		stop()
		_ = rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// readyErr says why waiting for node stopped: the caller's ctx ended, or
// the start timeout expired.
func (c *Cluster) readyErr(parent context.Context, node string) error {
	if err := parent.Err(); err != nil {
		return fmt.Errorf("localcluster: start: %w", err)
	}
	return fmt.Errorf("localcluster: node %s not ready after %s; its log ends:\n%s", node, c.opts.StartTimeout, tail(filepath.Join(c.dir, node+".log"), 10))
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	lines = lines[max(0, len(lines)-n):]
	return string(bytes.Join(lines, []byte("\n")))
}

// Nodes returns the cluster's nodes in topology order (region by region).
func (c *Cluster) Nodes() []Node { return append([]Node(nil), c.nodes...) }

// Dir returns the directory holding the configs, data and logs.
func (c *Cluster) Dir() string { return c.dir }

// World returns the cluster's world.
func (c *Cluster) World() *topo.World { return c.opts.World }

// Options returns the options the cluster runs with, defaults filled in.
func (c *Cluster) Options() Options { return c.opts }

// Stop closes the clients, sends every process SIGTERM and, to any still
// running after 5s, SIGKILL; it returns once all have exited, then removes
// the default directory unless Keep. It is idempotent and safe to call
// concurrently (from a signal handler's goroutine, say): later calls wait
// for the first to finish.
func (c *Cluster) Stop() {
	c.stopOnce.Do(c.stop)
}

func (c *Cluster) stop() {
	for _, n := range c.nodes {
		if n.Client != nil {
			_ = n.Client.Close()
		}
	}
	c.mu.Lock()
	procs := slices.Clone(c.procs)
	c.mu.Unlock()
	for _, p := range procs {
		select {
		case <-p.exited:
		default:
			// A paused process (SIGSTOP) cannot act on SIGTERM.
			_ = p.cmd.Process.Signal(syscall.SIGCONT)
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(stopGrace)
	for _, p := range procs {
		t := time.NewTimer(time.Until(deadline))
		select {
		case <-p.exited:
		case <-t.C:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		t.Stop()
	}
	switch {
	case !c.ownDir:
	case c.opts.Keep:
		fmt.Fprintf(c.opts.Log, "kept data and logs in %s\n", c.dir)
	default:
		_ = os.RemoveAll(c.dir)
	}
}

// String describes the cluster in one line.
func (c *Cluster) String() string {
	names := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		names[i] = n.Name + "=" + n.RESP
	}
	return fmt.Sprintf("local cluster of world %s (%s) in %s", c.opts.World.Name, strings.Join(names, " "), c.dir)
}
