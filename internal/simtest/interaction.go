package simtest

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Interaction is a cluster driven step by step by a datadriven script
// (etcd raft's interaction tests; STYLE.md): every message a node sends is
// held until the script delivers or drops it, and every step prints what
// happened, one line per message:
//
//	cluster protocol=NAME [regions=3] [nodes=1] [one-way=10ms]
//	name=value            (the input: the protocol's settings, one a line)
//	put NODE KEY=VALUE [client=N] [level=LEVEL]
//	get NODE KEY [client=N] [level=LEVEL]
//	deliver [from=NODE] [to=NODE] [kind=KIND] [n=N]
//	drop [from=NODE] [to=NODE] [kind=KIND] [n=N]
//	dup [from=NODE] [to=NODE] [kind=KIND] [n=N]   (the network copies them)
//	stabilize             (deliver until nothing is held)
//	held                  (list what is held)
//	tick DURATION         (let time pass: timers fire)
//	crash NODE / restart NODE
//	replicas KEY
//
// A delivered message prints as `n0 → n1 kind{fields}`, the messages and
// replies its handler sent indented under it; a client request as
// `client → n0 put k=v`; a timer that sent something as `@1.2s n0 timer
// payload`. Nodes are n0, n1, ... in the world's order (`cluster` prints
// them). Time starts at 0 and moves only with tick; delivery takes none.
type Interaction struct {
	// Commands are a protocol's own commands (lease's `master KEY`).
	Commands map[string]func(in *Interaction, td *datadriven.TestData) string

	tb     testing.TB
	s      *sim.Sim
	tp     *topo.Topology
	ks     protocol.Keyspace
	held   []heldMsg
	out    strings.Builder
	nextID wire.RequestID
	calls  map[wire.RequestID]string // "put k=v", by request
	print  printer                   // operation IDs as #1, #2, ...
}

type heldMsg struct {
	from, to wire.NodeID
	m        wire.Msg
	copy     int // which copy of m (dup): held copies are told apart
}

// line is h as the script prints it: `n0 → n1 kind{fields}`.
func (in *Interaction) line(h heldMsg) string {
	return Node(h.from) + " → " + Node(h.to) + " " + in.print.msg(h.m)
}

// RunInteractions runs every script matching pattern (testdata/*.txt), each
// on a fresh cluster, with the protocol's own commands; `go test -rewrite`
// rewrites the expected output (review the diff).
func RunInteractions(t *testing.T, pattern string, commands map[string]func(*Interaction, *datadriven.TestData) string) {
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scripts match %s (%v)", pattern, err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), func(t *testing.T) {
			in := &Interaction{Commands: commands}
			datadriven.RunTest(t, path, in.Handle)
		})
	}
}

// Keyspace is the cluster's keyspace (for a protocol's own commands).
func (in *Interaction) Keyspace() protocol.Keyspace { return in.ks }

// Handle runs one script command and returns its output.
func (in *Interaction) Handle(t *testing.T, td *datadriven.TestData) string {
	in.tb = t
	in.out.Reset()
	if td.Cmd != "cluster" && in.s == nil {
		td.Fatalf(t, "%s before cluster", td.Cmd)
	}
	switch td.Cmd {
	case "cluster":
		in.cluster(td)
	case "put", "get", "acquire", "release":
		in.request(td)
	case "deliver", "drop", "dup":
		in.deliverOrDrop(td)
	case "stabilize":
		for round := 0; len(in.held) > 0; round++ {
			if round == 100 {
				td.Fatalf(t, "still %d messages held after 100 rounds", len(in.held))
			}
			in.deliver(slices.Clone(in.held))
		}
	case "held":
		for _, h := range in.held {
			in.printf("%s\n", in.line(h))
		}
	case "tick":
		if len(td.CmdArgs) != 1 {
			td.Fatalf(t, "tick DURATION")
		}
		d, err := time.ParseDuration(td.CmdArgs[0].Key)
		if err != nil {
			td.Fatalf(t, "tick: %v", err)
		}
		in.s.Run(in.s.Now() + int64(d))
	case "crash":
		in.s.Crash(in.node(td, 0))
	case "restart":
		id := in.node(td, 0)
		in.s.Restart(id)
		in.s.Run(in.s.Now())
	case "replicas":
		if len(td.CmdArgs) != 1 {
			td.Fatalf(t, "replicas KEY")
		}
		var names []string
		for _, id := range in.ks.Replicas(nil, td.CmdArgs[0].Key) {
			names = append(names, Node(id))
		}
		in.printf("%s\n", strings.Join(names, " "))
	default:
		f := in.Commands[td.Cmd]
		if f == nil {
			td.Fatalf(t, "unknown command %q", td.Cmd)
		}
		return f(in, td)
	}
	if in.out.Len() == 0 {
		return "ok"
	}
	return in.out.String()
}

func (in *Interaction) printf(format string, args ...any) { fmt.Fprintf(&in.out, format, args...) }

// cluster builds the world (regions a, b, ... of nodes each, every link
// one-way apart), the protocol's keyspace with the input's settings, and
// the simulation, with every replica wrapped so its messages are held.
func (in *Interaction) cluster(td *datadriven.TestData) {
	name, regions, nodes, oneWay := "", 3, 1, "10ms"
	td.ScanArgs(in.tb, "protocol", &name)
	td.MaybeScanArgs(in.tb, "regions", &regions)
	td.MaybeScanArgs(in.tb, "nodes", &nodes)
	td.MaybeScanArgs(in.tb, "one-way", &oneWay)
	d, err := time.ParseDuration(oneWay)
	if err != nil {
		td.Fatalf(in.tb, "one-way: %v", err)
	}
	w, err := topo.Parse([]byte(worldYAML(regions, nodes, d)))
	if err != nil {
		td.Fatalf(in.tb, "world: %v", err)
	}
	in.tp = topo.NewTopology(w)
	var set []string
	for _, line := range strings.Split(td.Input, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			set = append(set, line)
		}
	}
	_, in.ks, err = protocol.Spec{Protocol: name, Set: set}.Build(in.tp)
	if err != nil {
		td.Fatalf(in.tb, "%v", err)
	}
	in.calls = map[wire.RequestID]string{}
	in.print = printer{ids: map[string]map[uint64]int{"Op": {}, "Nonce": {}}}
	factory := in.ks.Factory()
	in.s = sim.New(sim.Config{Seed: 1, Topology: in.tp, Factory: func(id wire.NodeID) env.Replica {
		return &stepped{in: in, id: id, r: factory(id)}
	}})
	for _, n := range in.tp.Nodes {
		// The nodes started within New, before run could sync for them.
		if err := in.s.Engine(n.ID).Sync(); err != nil {
			td.Fatalf(in.tb, "%s: sync: %v", Node(n.ID), err)
		}
	}
	for _, n := range in.tp.Nodes {
		in.printf("%s: %s (region %s)\n", Node(n.ID), n.Name, w.Regions[in.tp.RegionOf(n.ID)].Name)
	}
}

// worldYAML is regions a, b, ... of nodes nodes each, every link oneWay.
func worldYAML(regions, nodes int, oneWay time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: script\nnodes_per_region: %d\nregions:\n", nodes)
	for r := range regions {
		fmt.Fprintf(&b, "  - {name: %c}\n", 'a'+r)
	}
	if regions > 1 {
		b.WriteString("links:\n")
	}
	for r := range regions {
		for q := r + 1; q < regions; q++ {
			fmt.Fprintf(&b, "  - {from: %c, to: %c, one_way_ms: %g}\n", 'a'+r, 'a'+q, float64(oneWay)/float64(time.Millisecond))
		}
	}
	return b.String()
}

// request sends a client's put or get to its gateway now.
func (in *Interaction) request(td *datadriven.TestData) {
	if len(td.CmdArgs) < 2 {
		td.Fatalf(in.tb, "%s NODE KEY[=VALUE] [client=N] [level=LEVEL]", td.Cmd)
	}
	gw := in.node(td, 0)
	client, level := 1, ""
	td.MaybeScanArgs(in.tb, "client", &client)
	td.MaybeScanArgs(in.tb, "level", &level)
	in.nextID++
	req := &wire.Request{ID: in.nextID, Client: wire.ClientID(client), Op: wire.OpGet, Key: td.CmdArgs[1].Key}
	call := "get " + req.Key
	if td.Cmd == "put" {
		if len(td.CmdArgs[1].Vals) != 1 {
			td.Fatalf(in.tb, "put NODE KEY=VALUE")
		}
		req.Op, req.Value = wire.OpPut, []byte(td.CmdArgs[1].Vals[0])
		call = "put " + req.Key + "=" + td.CmdArgs[1].Vals[0]
	}
	if op, ok := map[string]wire.Op{"acquire": wire.OpAcquire, "release": wire.OpRelease}[td.Cmd]; ok {
		req.Op, call = op, td.Cmd+" "+req.Key
	}
	if level != "" {
		l, err := wire.ParseLevel(level)
		if err != nil {
			td.Fatalf(in.tb, "level: %v", err)
		}
		req.Level = l
		call += " level=" + l.String()
	}
	in.calls[req.ID] = call
	in.s.Request(gw, req)
	in.s.Run(in.s.Now())
}

// deliverOrDrop delivers (or drops, or duplicates: a second copy is held
// after the first) the held messages that match the filters, in the order
// they were sent; messages sent meanwhile stay held.
func (in *Interaction) deliverOrDrop(td *datadriven.TestData) {
	var from, to, kind string
	n := -1
	td.MaybeScanArgs(in.tb, "from", &from)
	td.MaybeScanArgs(in.tb, "to", &to)
	td.MaybeScanArgs(in.tb, "kind", &kind)
	td.MaybeScanArgs(in.tb, "n", &n)
	var pick, keep []heldMsg
	for _, h := range in.held {
		if (n < 0 || len(pick) < n) && (from == "" || from == Node(h.from)) && (to == "" || to == Node(h.to)) && (kind == "" || kind == h.m.Kind()) {
			pick = append(pick, h)
		} else {
			keep = append(keep, h)
		}
	}
	if td.Cmd == "dup" {
		for _, h := range pick {
			for _, x := range in.held {
				if x.from == h.from && x.to == h.to && x.m == h.m {
					h.copy = max(h.copy, x.copy+1)
				}
			}
			in.held = append(in.held, h)
			in.printf("duplicated %s\n", in.line(h))
		}
		return
	}
	if td.Cmd == "drop" {
		in.held = keep
		for _, h := range pick {
			in.printf("dropped %s\n", in.line(h))
		}
		return
	}
	in.held = keep
	in.deliver(pick)
}

// deliver hands each of hs to its receiver, one at a time; the receiver's
// output is held (appended to in.held) and printed under it.
func (in *Interaction) deliver(hs []heldMsg) {
	in.held = slices.DeleteFunc(in.held, func(h heldMsg) bool {
		return slices.ContainsFunc(hs, func(x heldMsg) bool { return x == h })
	})
	for _, h := range hs {
		if !in.s.Up(h.to) {
			in.printf("%s (lost: %s is down)\n", in.line(h), Node(h.to))
			continue
		}
		in.s.Deliver(h.from, h.to, h.m)
		in.s.Run(in.s.Now())
	}
}

// node parses the i-th argument as a node ("n2").
func (in *Interaction) node(td *datadriven.TestData, i int) wire.NodeID {
	if len(td.CmdArgs) <= i {
		td.Fatalf(in.tb, "%s: want a node (n0..n%d)", td.Cmd, len(in.tp.Nodes)-1)
	}
	s := td.CmdArgs[i].Key
	id, err := strconv.Atoi(strings.TrimPrefix(s, "n"))
	if !strings.HasPrefix(s, "n") || err != nil || id < 0 || id >= len(in.tp.Nodes) {
		td.Fatalf(in.tb, "%s: %q is not a node (n0..n%d)", td.Cmd, s, len(in.tp.Nodes)-1)
	}
	return wire.NodeID(id)
}

// stepped wraps a node's replica so that what it sends is held by the
// Interaction and printed.
type stepped struct {
	in *Interaction
	id wire.NodeID
	r  env.Replica
}

func (x *stepped) Start(e env.Env) {
	x.run(e, Node(x.id)+" start", false, func(e env.Env) { x.r.Start(e) })
}

func (x *stepped) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	x.run(e, x.in.line(heldMsg{from: from, to: x.id, m: m}), true, func(e env.Env) { x.r.Step(e, from, m) })
}

func (x *stepped) Request(e env.Env, req *wire.Request) {
	x.run(e, "client → "+Node(x.id)+" "+x.in.calls[req.ID], true, func(e env.Env) { x.r.Request(e, req) })
}

func (x *stepped) Timer(e env.Env, payload any) {
	at := time.Duration(x.in.s.Now())
	x.run(e, fmt.Sprintf("@%s %s timer %s", at, Node(x.id), x.in.print.any(payload)), false, func(e env.Env) { x.r.Timer(e, payload) })
}

// run calls the replica with an Env that holds its messages and replies,
// syncs its store if it sent anything, and prints header (always, or only if the handler sent something) with
// what it sent indented under it. A handler that fail-stops sends nothing.
func (x *stepped) run(e env.Env, header string, always bool, f func(env.Env)) {
	h := &holdEnv{Env: e}
	f(h)
	if h.stopped == nil && (len(h.msgs) > 0 || len(h.replies) > 0) && x.in.s != nil {
		// Persist before send, as the runtime does for what it releases:
		// a node crashed after the script delivered its messages keeps
		// what they depend on.
		if err := x.in.s.Engine(x.id).Sync(); err != nil {
			x.in.tb.Fatalf("%s: sync: %v", Node(x.id), err)
		}
	}
	var lines []string
	if h.stopped != nil {
		lines = append(lines, fmt.Sprintf("%s fail-stop: %v", Node(x.id), h.stopped))
	} else {
		for _, m := range h.msgs {
			x.in.held = append(x.in.held, m)
			lines = append(lines, x.in.line(m))
		}
		for _, r := range h.replies {
			call := x.in.calls[r.ID]
			lines = append(lines, Node(x.id)+" → client: "+call+" → "+outcome(strings.HasPrefix(call, "get"), r))
		}
	}
	if !always && len(lines) == 0 {
		return
	}
	x.in.printf("%s\n", header)
	for _, l := range lines {
		x.in.printf("  %s\n", l)
	}
}

// outcome is a reply's result: the error, the value a read found (or
// "not found"), or ok for a write; and the version read or written.
func outcome(read bool, r *wire.Reply) string {
	var s string
	switch {
	case r.Err != nil:
		s = r.Err.Error()
		if r.Err.OutcomeUnknown() {
			s += " (outcome unknown)"
		}
		return s
	case read && r.Found:
		s = word(string(r.Value))
	case read:
		s = "not found"
	default:
		s = "ok"
	}
	if !r.Version.IsZero() {
		s += " version=" + printer{}.value(reflect.ValueOf(r.Version))
	}
	return s
}

// holdEnv is a replica's Env during one handler, keeping what it sends.
type holdEnv struct {
	env.Env
	msgs    []heldMsg
	replies []*wire.Reply
	stopped error
}

func (h *holdEnv) Send(to wire.NodeID, m wire.Msg) {
	if h.stopped == nil {
		h.msgs = append(h.msgs, heldMsg{from: h.Self(), to: to, m: m})
	}
}

func (h *holdEnv) Reply(r *wire.Reply) {
	if h.stopped == nil {
		h.replies = append(h.replies, r)
	}
}

func (h *holdEnv) FailStop(cause error) {
	if h.stopped == nil {
		h.stopped = cause
	}
	h.Env.FailStop(cause)
}
