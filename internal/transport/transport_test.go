package transport

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

type ping struct{ N uint64 }

func (*ping) Kind() string                    { return "test.ping" }
func (p *ping) AppendPayload(b []byte) []byte { return wire.AppendUvarint(b, p.N) }
func (p *ping) DecodePayload(d *wire.Decoder) { p.N = d.Uvarint() }
func testCodec(t *testing.T) *wire.Codec {
	c, err := wire.NewCodec([]wire.MsgType{{Kind: "test.ping", New: func() wire.Encodable { return new(ping) }}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type inbox struct {
	mu   sync.Mutex
	got  []uint64
	from []wire.NodeID
	at   []time.Time
}

func (b *inbox) deliver(from wire.NodeID, m wire.Msg) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got = append(b.got, m.(*ping).N)
	b.from = append(b.from, from)
	b.at = append(b.at, time.Now())
}

func (b *inbox) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.got)
}

// waitFor polls cond with a bound instead of sleeping a fixed time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func freeAddrs(t *testing.T, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l.Addr().String())
		l.Close()
	}
	return out
}

func pair(t *testing.T, wan *WAN) (*Transport, *Transport, *inbox) {
	addrs := freeAddrs(t, 2)
	peers := map[wire.NodeID]string{0: addrs[0], 1: addrs[1]}
	in := &inbox{}
	a, err := New(Config{Self: 0, Cluster: "c", Listen: addrs[0], Peers: peers, Codec: testCodec(t), Deliver: func(wire.NodeID, wire.Msg) {}, WAN: wan})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Self: 1, Cluster: "c", Listen: addrs[1], Peers: peers, Codec: testCodec(t), Deliver: in.deliver, WAN: wan})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b, in
}

func TestFIFODelivery(t *testing.T) {
	a, _, in := pair(t, nil)
	const n = 10000
	for i := 0; i < n; i++ {
		a.Send(1, &ping{N: uint64(i)})
	}
	waitFor(t, "all messages", func() bool { return in.len() == n })
	for i, v := range in.got {
		if v != uint64(i) || in.from[i] != 0 {
			t.Fatalf("message %d = %d from %d; want %d from 0 (FIFO)", i, v, in.from[i], i)
		}
	}
}

func TestWANEmulationHoldsMessages(t *testing.T) {
	w, err := topo.Parse([]byte("name: w\nnodes_per_region: 1\nregions: [{name: a}, {name: b}]\nlinks: [{from: a, to: b, one_way_ms: 80, jitter: {dist: exponential, mean_ms: 5}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, _, in := pair(t, &WAN{Topology: topo.NewTopology(w), Seed: 1})
	start := time.Now()
	for i := 0; i < 50; i++ {
		a.Send(1, &ping{N: uint64(i)})
	}
	waitFor(t, "delayed messages", func() bool { return in.len() == 50 })
	for i, at := range in.at {
		if d := at.Sub(start); d < 80*time.Millisecond {
			t.Fatalf("message %d arrived after %s; want ≥ 80ms one-way", i, d)
		}
		if in.got[i] != uint64(i) {
			t.Fatalf("message %d = %d: jitter broke FIFO", i, in.got[i])
		}
	}
}

func TestBlockAndReconnect(t *testing.T) {
	addrs := freeAddrs(t, 2)
	peers := map[wire.NodeID]string{0: addrs[0], 1: addrs[1]}
	in := &inbox{}
	a, err := New(Config{Self: 0, Cluster: "c", Listen: addrs[0], Peers: peers, Codec: testCodec(t), Deliver: func(wire.NodeID, wire.Msg) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.Block(1)
	a.Send(1, &ping{N: 1})
	if a.Dropped() != 1 {
		t.Fatalf("Dropped() = %d after sending to a blocked peer; want 1", a.Dropped())
	}
	a.Unblock(1)
	// The peer is not up yet: the sender retries with backoff until it is.
	a.Send(1, &ping{N: 2})
	b, err := New(Config{Self: 1, Cluster: "c", Listen: addrs[1], Peers: peers, Codec: testCodec(t), Deliver: in.deliver})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "delivery after the peer came up", func() bool { return in.len() == 1 })
	b.Close()
	// Restart the peer: the sender reconnects.
	b, err = New(Config{Self: 1, Cluster: "c", Listen: addrs[1], Peers: peers, Codec: testCodec(t), Deliver: in.deliver})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	waitFor(t, "delivery after the peer restarted", func() bool {
		a.Send(1, &ping{N: 3}) // the first sends may die with the old connection
		return in.len() >= 2
	})
}

// TestGarbageOnThePeerPort: junk, a wrong cluster, an unknown node ID or an
// oversized frame only lose their own connection; the node keeps working.
func TestGarbageOnThePeerPort(t *testing.T) {
	a, b, in := pair(t, nil)
	for _, junk := range [][]byte{
		[]byte("GET / HTTP/1.1\r\n\r\n"),
		append([]byte(magic), 9),
		append(append([]byte(magic), protocolVersion), wire.AppendVarint(wire.AppendString(nil, "other"), 0)...),
		append(append([]byte(magic), protocolVersion), wire.AppendVarint(wire.AppendString(nil, "c"), 42)...),
		append(append(append([]byte(magic), protocolVersion), wire.AppendVarint(wire.AppendString(nil, "c"), 0)...), 0xff, 0xff, 0xff, 0xff, 0x7f),
		append(append(append([]byte(magic), protocolVersion), wire.AppendVarint(wire.AppendString(nil, "c"), 0)...), 3, 1, 0, 0),
	} {
		c, err := net.Dial("tcp", b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		c.Write(junk)
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 1)
		if _, err := c.Read(buf); err == nil {
			t.Errorf("junk %q: connection still open after garbage", junk)
		}
		c.Close()
	}
	a.Send(1, &ping{N: 7})
	waitFor(t, "delivery after garbage", func() bool { return in.len() == 1 })
	if fmt.Sprint(in.got) != "[7]" {
		t.Fatalf("got %v; want [7]", in.got)
	}
}

// TestPingMeasuresEmulatedRTT: the links' pings see the WAN emulation's
// round trip (what the calibration experiment checks).
func TestPingMeasuresEmulatedRTT(t *testing.T) {
	w, err := topo.Parse([]byte("name: w\nnodes_per_region: 1\nregions: [{name: a}, {name: b}]\nlinks: [{from: a, to: b, one_way_ms: 40}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, _, _ := pair(t, &WAN{Topology: topo.NewTopology(w), Seed: 1})
	waitFor(t, "a round-trip sample", func() bool { return a.RTTs()[1].Count > 0 })
	r := a.RTTs()[1]
	if r.Min < 80*time.Millisecond || r.Min > 120*time.Millisecond {
		t.Fatalf("measured RTT %s; want ≈ 80ms (2 × 40ms one-way)", r.Min)
	}
}
