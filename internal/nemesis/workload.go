package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/localcluster"
)

// failBackoff is how long a client waits after an operation that did not
// complete.
const failBackoff = 100 * time.Millisecond

// history is a keyspace's recorded operations, appended to concurrently.
type history struct {
	mu  sync.Mutex
	ops []check.Op
	// versions are the versions reads returned, by value (values are
	// unique): the position of a write whose reply never came.
	versions map[string]check.Position
}

func (h *history) observe(value string, p check.Position) {
	if !p.Set {
		return
	}
	h.mu.Lock()
	if h.versions == nil {
		h.versions = map[string]check.Position{}
	}
	h.versions[value] = p
	h.mu.Unlock()
}

func (h *history) add(op check.Op) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// snapshot copies the history, placing each write without a position at
// the version a read saw it with.
func (h *history) snapshot() check.History {
	h.mu.Lock()
	defer h.mu.Unlock()
	ops := append([]check.Op(nil), h.ops...)
	for i, o := range ops {
		if p, ok := h.versions[o.Value]; ok && o.Kind == check.Write && o.Found && !o.Pos.Set {
			ops[i].Pos = p
		}
	}
	return check.History{Ops: ops}
}

// workload is the clients: ClientsPerNode per node and keyspace, each one
// operation at a time.
type workload struct {
	o     Options
	cl    *localcluster.Cluster
	kss   []*keyspace
	seed  uint64
	start time.Time

	sessions atomic.Int64 // the last session ID handed out
	ok       atomic.Int64
	failed   atomic.Int64
	unknown  atomic.Int64
}

// now is the time since the run began, the histories' clock.
func (w *workload) now() int64 { return int64(time.Since(w.start)) }

// client is a RESP client of one node, addressing one keyspace on every
// connection it opens (so a reconnect cannot fall back to the default
// keyspace). It never retries: a retry would hide an outcome.
func (w *workload) client(node localcluster.Node, ks string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: node.RESP, Protocol: 2, MaxRetries: -1, PoolSize: 1,
		DialTimeout: time.Second, ReadTimeout: w.o.OpTimeout, WriteTimeout: w.o.OpTimeout, ContextTimeoutEnabled: true,
		OnConnect: func(ctx context.Context, cn *redis.Conn) error { return cn.Do(ctx, "LC.KEYSPACE", ks).Err() }})
}

// session is one client's program order: a new one begins after every
// write of unknown outcome (it may still take effect, after the client's
// later operations).
type session struct {
	w    *workload
	k    *keyspace
	node localcluster.Node
	c    *redis.Client
	id   int64
	seq  int
}

func (w *workload) newSession(k *keyspace, node localcluster.Node) *session {
	return &session{w: w, k: k, node: node, c: w.client(node, k.policy.Name), id: w.sessions.Add(1)}
}

func (s *session) renew() {
	_ = s.c.Close()
	s.c = s.w.client(s.node, s.k.policy.Name)
	s.id = s.w.sessions.Add(1)
}

func (s *session) close() { _ = s.c.Close() }

// neverSent reports whether err shows the request never reached the node:
// the connection could not be made.
func neverSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// writeOutcome classifies a write's reply. UNAVAILABLE and "ERR disk
// full" are documented to mean the write took no effect (internal/api/resp
// doc.go); a timeout, a lost connection or any other error leaves the
// outcome unknown.
func writeOutcome(err error) check.Outcome {
	switch {
	case err == nil:
		return check.OK
	case neverSent(err):
		return check.Failed
	case strings.HasPrefix(err.Error(), "UNAVAILABLE"), strings.HasPrefix(err.Error(), "ERR disk full"):
		return check.Failed
	}
	return check.Unknown
}

// write puts a unique value (or deletes, when del) and records it.
func (s *session) write(ctx context.Context, key string, del bool) check.Outcome {
	s.seq++
	op := check.Op{Client: s.id, Key: key, Kind: check.Write, Call: s.w.now()}
	ctx, cancel := context.WithTimeout(ctx, s.w.o.OpTimeout)
	defer cancel()
	var err error
	var version string
	switch {
	case !del:
		op.Value, op.Found = fmt.Sprintf("s%d-%d", s.id, s.seq), true
		if s.k.positions {
			version, err = s.c.Do(ctx, "LC.SET", key, op.Value).Text()
		} else {
			err = s.c.Set(ctx, key, op.Value, 0).Err()
		}
	default:
		version, err = s.c.Do(ctx, "LC.DEL", key).Text()
	}
	op.Return, op.Outcome = s.w.now(), writeOutcome(err)
	if err == nil && s.k.positions {
		op.Pos = versionPos(version)
	}
	s.k.hist.add(op)
	s.w.count(op.Outcome)
	if op.Outcome == check.Unknown {
		s.renew()
	}
	return op.Outcome
}

// read gets key and records what it returned.
func (s *session) read(ctx context.Context, key string) check.Outcome {
	op := check.Op{Client: s.id, Key: key, Kind: check.Read, Call: s.w.now(), Outcome: check.OK}
	ctx, cancel := context.WithTimeout(ctx, s.w.o.OpTimeout)
	defer cancel()
	var v string
	var err error
	if s.k.positions {
		v, err = s.getAt(ctx, &op)
	} else {
		v, err = s.c.Get(ctx, key).Result()
	}
	op.Return = s.w.now()
	switch {
	case errors.Is(err, redis.Nil):
	case err != nil:
		op.Outcome = check.Failed
	default:
		op.Value, op.Found = v, true
	}
	s.k.hist.add(op)
	s.w.count(op.Outcome)
	return op.Outcome
}

// getAt reads key with LC.GETAT, setting op's position to where the
// protocol placed the read; a read of nothing is redis.Nil, as GET's.
func (s *session) getAt(ctx context.Context, op *check.Op) (string, error) {
	res, err := s.c.Do(ctx, "LC.GETAT", op.Key).Slice()
	if err != nil {
		return "", err
	}
	if len(res) != 3 {
		return "", fmt.Errorf("LC.GETAT %s: reply %v; want [value version read_at]", op.Key, res)
	}
	if at, ok := res[2].(int64); ok && at != 0 {
		op.Pos = check.Position{Set: true, T: at, Sub: math.MaxInt64, Node: math.MaxInt64}
	}
	if res[0] == nil {
		return "", redis.Nil
	}
	v, ok := res[0].(string)
	if !ok {
		return "", fmt.Errorf("LC.GETAT %s: value %T; want a string", op.Key, res[0])
	}
	// The version of the value read places its write, whose own reply
	// may never have come (an unknown outcome).
	if ver, ok := res[1].(string); ok {
		s.k.hist.observe(v, versionPos(ver))
	}
	return v, nil
}

// versionPos is a wire.Version's string ("<wall>.<logical>@n<node>") as a
// position; unset if it does not parse.
func versionPos(v string) check.Position {
	var wall, logical, node int64
	if _, err := fmt.Sscanf(v, "%d.%d@n%d", &wall, &logical, &node); err != nil || wall == 0 {
		return check.Position{}
	}
	return check.Position{Set: true, T: wall, Sub: logical, Node: node}
}

func (w *workload) count(o check.Outcome) {
	switch o {
	case check.OK:
		w.ok.Add(1)
	case check.Failed:
		w.failed.Add(1)
	default:
		w.unknown.Add(1)
	}
}

func (w *workload) progress() string {
	return fmt.Sprintf("ops %d ok / %d failed / %d unknown", w.ok.Load(), w.failed.Load(), w.unknown.Load())
}

// waitServing polls, with a bound, until every node answers a read in
// every keyspace (the cluster is up, but a keyspace's protocol may still
// be settling).
func (w *workload) waitServing(ctx context.Context) error {
	for _, k := range w.kss {
		for _, n := range w.cl.Nodes() {
			c := w.client(n, k.policy.Name)
			deadline := time.Now().Add(30 * time.Second)
			err := c.Get(ctx, "nemesis:warm").Err()
			for err != nil && !errors.Is(err, redis.Nil) {
				if time.Now().After(deadline) || ctx.Err() != nil {
					_ = c.Close()
					return fmt.Errorf("nemesis: %s never served keyspace %s: %w", n.Name, k.policy.Name, err)
				}
				time.Sleep(50 * time.Millisecond)
				err = c.Get(ctx, "nemesis:warm").Err()
			}
			_ = c.Close()
		}
	}
	return nil
}

// run starts the clients; the returned function stops them and returns
// once every one has finished its operation in flight.
func (w *workload) run(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	i := 0
	for _, k := range w.kss {
		for _, n := range w.cl.Nodes() {
			for range w.o.ClientsPerNode {
				rng := rand.New(rand.NewPCG(w.seed, uint64(i)))
				i++
				wg.Go(func() {
					s := w.newSession(k, n)
					defer func() { s.close() }()
					for {
						select {
						case <-done:
							return
						default:
						}
						key := fmt.Sprintf("k%d", rng.IntN(w.o.Keys))
						var out check.Outcome
						switch p := rng.IntN(100); {
						case p < 45:
							out = s.write(ctx, key, false)
						case p < 50 && !k.positions:
							// A delete whose reply never came has no
							// value a read could identify it by, so no
							// position: keyspaces that record positions
							// only put.
							out = s.write(ctx, key, true)
						case p < 50:
							out = s.write(ctx, key, false)
						default:
							out = s.read(ctx, key)
						}
						if out != check.OK {
							// A down or refusing node fails fast: back off
							// rather than spin.
							sleep(ctx, failBackoff)
						}
					}
				})
			}
		}
	}
	return func() {
		close(done)
		// An operation in flight finishes (or times out) and is recorded.
		wg.Wait()
		cancel()
	}
}

// recover checks, once faults are healed, that every node serves a write
// and a read in every keyspace within RecoverWithin, polling; the
// operations join the history. It returns the node/keyspace pairs that did
// not recover.
func (w *workload) recover(ctx context.Context) []string {
	var out []string
	deadline := time.Now().Add(w.o.RecoverWithin)
	for _, k := range w.kss {
		for _, n := range w.cl.Nodes() {
			s := w.newSession(k, n)
			key := "recovered-" + n.Name
			for ctx.Err() == nil && (s.write(ctx, key, false) != check.OK || s.read(ctx, key) != check.OK) {
				if time.Now().After(deadline) {
					out = append(out, fmt.Sprintf("%s/%s", n.Name, k.policy.Name))
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			s.close()
		}
	}
	return out
}
