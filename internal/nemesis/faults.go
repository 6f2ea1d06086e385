package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lightcone/lightcone/internal/localcluster"
	"github.com/lightcone/lightcone/internal/topo"
)

// Kind is a kind of fault.
type Kind string

// The fault kinds (doc.go describes each).
const (
	KindKill      Kind = "kill"
	KindPartition Kind = "partition"
	KindLink      Kind = "link"
	KindPause     Kind = "pause"
	KindClock     Kind = "clock"
	KindMigrate   Kind = "migrate"
	KindDisk      Kind = "disk"
)

// AllKinds lists every kind, in report order.
var AllKinds = []Kind{KindKill, KindPartition, KindLink, KindPause, KindClock, KindMigrate, KindDisk}

// DefaultKinds returns the kinds a run injects unless told otherwise: all
// of them, KindDisk only where this process can mount a tmpfs (root, with
// the capability). A full disk must not stop a node: it refuses client
// writes and keeps running, and one that exits is a crash.
func DefaultKinds() []Kind { return defaultKinds(canMountTmpfs()) }

// canMountTmpfs reports whether a tmpfs can be mounted here (and unmounts
// the one it tried).
func canMountTmpfs() bool {
	if os.Geteuid() != 0 {
		return false
	}
	dir, err := os.MkdirTemp("", "nemesis-probe")
	if err != nil {
		return false
	}
	defer os.Remove(dir)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		return false
	}
	return syscall.Unmount(dir, 0) == nil
}

func defaultKinds(disk bool) []Kind {
	ks := []Kind{KindKill, KindPartition, KindLink, KindPause, KindClock, KindMigrate}
	if disk {
		ks = append(ks, KindDisk)
	}
	return ks
}

func (k Kind) valid() bool {
	for _, a := range AllKinds {
		if a == k {
			return true
		}
	}
	return false
}

// ParseKinds reads a comma-separated list of kinds; "all" is AllKinds,
// "default" DefaultKinds() and "none" nothing.
func ParseKinds(s string) ([]Kind, error) {
	var out []Kind
	for _, f := range strings.Split(s, ",") {
		switch f = strings.TrimSpace(f); f {
		case "", "none":
		case "all":
			out = append(out, AllKinds...)
		case "default":
			out = append(out, DefaultKinds()...)
		default:
			if !Kind(f).valid() {
				return nil, fmt.Errorf("nemesis: unknown fault %q (valid: %s, all, default)", f, kindList(AllKinds))
			}
			out = append(out, Kind(f))
		}
	}
	return out, nil
}

func kindList(ks []Kind) string {
	if len(ks) == 0 {
		return "none"
	}
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ",")
}

// nemesis injects faults into a running cluster, one at a time.
type nemesis struct {
	o       Options
	cl      *localcluster.Cluster
	kss     []*keyspace
	rng     *rand.Rand
	bound   time.Duration   // every wall-clock offset stays within ±bound
	offsets []time.Duration // each node's wall-clock offset
	disks   *disks
	faults  map[Kind]int
	crashes []string
	// noMigrate marks keyspaces whose protocol refused LC.MIGRATE.
	noMigrate map[string]bool
	log       io.Writer
}

func (n *nemesis) summary() string { return Report{Faults: n.faults}.FaultSummary() }

// run injects faults until d has passed and every kind was injected at
// least once, or ctx ends. Kinds come in rounds, each a random permutation
// of the kinds, so a short run still covers every one.
func (n *nemesis) run(ctx context.Context, d time.Duration) {
	if len(n.o.Kinds) == 0 {
		sleep(ctx, d)
		return
	}
	end := time.Now().Add(d)
	var round []Kind
	for rounds := 0; ctx.Err() == nil; {
		if len(round) == 0 {
			if rounds > 0 && time.Now().After(end) {
				return
			}
			rounds++
			round = append(round, n.o.Kinds...)
			n.rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		}
		gap := n.o.Interval/2 + time.Duration(n.rng.Int64N(int64(n.o.Interval)+1))
		if rounds > 1 && time.Until(end) < gap {
			sleep(ctx, time.Until(end))
			return
		}
		sleep(ctx, gap)
		kind := round[0]
		round = round[1:]
		if err := n.inject(ctx, kind); err != nil {
			n.logf("%s: %v", kind, err)
			n.resume() // leave nothing half done
		}
		n.restartCrashed(ctx)
	}
}

// sleep waits d or until ctx ends. Fault schedules wait between faults;
// nothing waits for state this way.
func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (n *nemesis) logf(format string, args ...any) {
	fmt.Fprintf(n.log, "nemesis: %s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
}

// inject applies one fault of kind and heals it.
func (n *nemesis) inject(ctx context.Context, kind Kind) error {
	nodes := n.cl.Nodes()
	i := n.rng.IntN(len(nodes))
	name := nodes[i].Name
	switch kind {
	case KindKill:
		n.logf("kill -9 %s for %s", name, n.o.Hold)
		if err := n.cl.Kill(i); err != nil {
			return err
		}
		n.faults[kind]++
		sleep(ctx, n.o.Hold)
		return n.restart(ctx, i)
	case KindPartition:
		n.logf("isolate %s for %s", name, n.o.Hold)
		for j, o := range nodes {
			if j != i {
				if err := n.block(nodes[i], o.Name); err != nil {
					return err
				}
				if err := n.block(o, name); err != nil {
					return err
				}
			}
		}
		n.faults[kind]++
		sleep(ctx, n.o.Hold)
		return n.unblockAll()
	case KindLink:
		j := (i + 1 + n.rng.IntN(len(nodes)-1)) % len(nodes)
		n.logf("cut link %s-%s for %s", name, nodes[j].Name, n.o.Hold)
		if err := n.block(nodes[i], nodes[j].Name); err != nil {
			return err
		}
		if err := n.block(nodes[j], name); err != nil {
			return err
		}
		n.faults[kind]++
		sleep(ctx, n.o.Hold)
		return n.unblockAll()
	case KindPause:
		n.logf("SIGSTOP %s for %s", name, n.o.Pause)
		if err := n.cl.Signal(i, syscall.SIGSTOP); err != nil {
			return err
		}
		n.faults[kind]++
		sleep(ctx, n.o.Pause)
		return n.cl.Signal(i, syscall.SIGCONT)
	case KindClock:
		target := time.Duration(n.rng.Int64N(2*int64(n.bound)+1)) - n.bound
		n.logf("step %s's wall clock by %s to offset %s", name, target-n.offsets[i], target)
		off, err := n.stepClock(nodes[i], target-n.offsets[i])
		if err != nil {
			return err
		}
		if off != target {
			return fmt.Errorf("%s: clock offset %s after the step; want %s", name, off, target)
		}
		n.offsets[i] = target
		n.faults[kind]++
		return nil
	case KindMigrate:
		return n.migrate(ctx, nodes[i])
	case KindDisk:
		n.logf("fill %s's disk for %s", name, n.o.Hold)
		if err := n.disks.fill(i); err != nil {
			return err
		}
		n.faults[kind]++
		sleep(ctx, n.o.Hold)
		return n.disks.drain(i)
	}
	return fmt.Errorf("unknown fault %q", kind)
}

// migrate moves a random key's mastership to a random region, from node,
// in every keyspace whose protocol supports LC.MIGRATE.
func (n *nemesis) migrate(ctx context.Context, node localcluster.Node) error {
	regions := n.cl.World().Regions
	for _, k := range n.kss {
		if n.noMigrate[k.policy.Name] {
			continue
		}
		var key string
		region := regions[n.rng.IntN(len(regions))].Name
		c := (&workload{o: n.o}).client(node, k.policy.Name)
		var err error
		// A key whose mastership is moving or being confirmed is refused
		// as UNAVAILABLE (safe to retry): retry, with a bound, and after
		// every fifth refusal try another key.
		for try := 0; try < 20 && ctx.Err() == nil; try++ {
			if try%5 == 0 {
				key = fmt.Sprintf("k%d", n.rng.IntN(n.o.Keys))
			}
			cctx, cancel := context.WithTimeout(ctx, n.o.OpTimeout)
			err = c.Do(cctx, "LC.MIGRATE", key, region).Err()
			cancel()
			if err == nil || !strings.HasPrefix(err.Error(), "UNAVAILABLE") {
				break
			}
			sleep(ctx, 50*time.Millisecond)
		}
		_ = c.Close()
		switch {
		case err != nil && strings.Contains(err.Error(), "unknown operation"):
			if n.noMigrate == nil {
				n.noMigrate = map[string]bool{}
			}
			n.noMigrate[k.policy.Name] = true
			n.logf("keyspace %s does not migrate (%v)", k.policy.Name, err)
		case err != nil && strings.HasPrefix(err.Error(), "UNAVAILABLE"):
			n.logf("migrate %s/%s to %s via %s: still refused after 20 tries: %v", k.policy.Name, key, region, node.Name, err)
		case err != nil:
			// A timeout: the migration may or may not happen.
			n.logf("migrate %s/%s to %s via %s: %v", k.policy.Name, key, region, node.Name, err)
			n.faults[KindMigrate]++
		default:
			n.logf("migrated %s/%s to %s via %s", k.policy.Name, key, region, node.Name)
			n.faults[KindMigrate]++
		}
	}
	return nil
}

// httpClient bounds every fault-hook request.
var httpClient = &http.Client{Timeout: 5 * time.Second}

// debug POSTs to a node's fault hook and decodes its JSON reply into out.
func debug(node localcluster.Node, path string, q url.Values, out any) error {
	res, err := httpClient.Post("http://"+node.HTTP+path+"?"+q.Encode(), "", nil)
	if err != nil {
		return fmt.Errorf("%s %s: %w", node.Name, path, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s?%s: %s: %s", node.Name, path, q.Encode(), res.Status, strings.TrimSpace(string(body)))
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return fmt.Errorf("%s %s: reply %q: %w", node.Name, path, body, err)
		}
	}
	return nil
}

func (n *nemesis) block(at localcluster.Node, peer string) error {
	return debug(at, "/debug/transport", url.Values{"block": {peer}}, nil)
}

// unblockAll heals every link on every running node.
func (n *nemesis) unblockAll() error {
	var errs []error
	for i, node := range n.cl.Nodes() {
		if n.cl.Running(i) {
			errs = append(errs, debug(node, "/debug/transport", url.Values{"unblock": {"all"}}, nil))
		}
	}
	return errors.Join(errs...)
}

// stepClock steps node's wall clock by d and returns its offset.
func (n *nemesis) stepClock(node localcluster.Node, d time.Duration) (time.Duration, error) {
	var reply struct {
		OffsetNs int64 `json:"offset_ns"`
	}
	err := debug(node, "/debug/clock", url.Values{"step": {d.String()}}, &reply)
	return time.Duration(reply.OffsetNs), err
}

// restart starts node i again on the wall clock it had: the machine's
// clock stays stepped across a process restart.
func (n *nemesis) restart(ctx context.Context, i int) error {
	return n.cl.Restart(ctx, i, "--clock-offset", n.offsets[i].String())
}

// restartCrashed restarts every node that exited by itself, noting it as
// a crash.
func (n *nemesis) restartCrashed(ctx context.Context) {
	for i, node := range n.cl.Nodes() {
		if n.cl.Running(i) || ctx.Err() != nil {
			continue
		}
		n.logf("%s exited by itself (see %s.log); restarting it", node.Name, node.Name)
		n.crashes = append(n.crashes, node.Name)
		if err := n.restart(ctx, i); err != nil {
			n.logf("restart %s: %v", node.Name, err)
		}
	}
}

// healAll undoes whatever an interrupted fault left: resumes paused
// nodes, heals links, drains disks and restarts stopped nodes. Clock
// offsets stay (they are within every claimed bound).
func (n *nemesis) healAll(ctx context.Context) {
	for i := range n.cl.Nodes() {
		if n.disks != nil {
			_ = n.disks.drain(i)
		}
	}
	n.restartCrashed(ctx)
	n.resume()
	n.logf("healed: every node running and connected")
}

// resume continues every paused node and heals every link.
func (n *nemesis) resume() {
	for i := range n.cl.Nodes() {
		if n.cl.Running(i) {
			_ = n.cl.Signal(i, syscall.SIGCONT)
		}
	}
	if err := n.unblockAll(); err != nil {
		n.logf("heal: %v", err)
	}
}

// disks are the nodes' data file systems when the disk fault is on: one
// small tmpfs per node, mounted where localcluster puts its data.
type disks struct {
	dirs []string
}

// mountDisks mounts a tmpfs of o.DiskSize on each node's data directory
// (dir/<node>) if the disk fault is on; nil otherwise.
func mountDisks(o Options, dir string, tp *topo.Topology) (*disks, error) {
	on := false
	for _, k := range o.Kinds {
		on = on || k == KindDisk
	}
	if !on {
		return nil, nil
	}
	d := &disks{}
	for _, node := range tp.Nodes {
		p := filepath.Join(dir, node.Name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return d, fmt.Errorf("nemesis: %w", err)
		}
		if err := syscall.Mount("tmpfs", p, "tmpfs", 0, "size="+o.DiskSize); err != nil {
			d.unmount(io.Discard)
			return nil, fmt.Errorf("nemesis: mount tmpfs on %s: %w", p, err)
		}
		d.dirs = append(d.dirs, p)
	}
	return d, nil
}

func (d *disks) ballast(i int) string { return filepath.Join(d.dirs[i], "nemesis-ballast") }

// fill writes a ballast file until the node's file system is full.
func (d *disks) fill(i int) error {
	f, err := os.Create(d.ballast(i))
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}

// drain removes node i's ballast.
func (d *disks) drain(i int) error {
	if d == nil {
		return nil
	}
	if err := os.Remove(d.ballast(i)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// unmount unmounts every tmpfs (after the cluster stopped).
func (d *disks) unmount(log io.Writer) {
	if d == nil {
		return
	}
	for _, p := range d.dirs {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil {
			fmt.Fprintf(log, "nemesis: unmount %s: %v\n", p, err)
		}
	}
}
