// Package transport carries protocol messages between nodes over TCP:
// one persistent outbound connection per peer, length-prefixed frames in
// the versioned wire codec, FIFO per link, reconnection with backoff, and
// optional WAN emulation that holds each message for its region pair's
// one-way delay so a whole world runs on one machine (DESIGN.md, "Real
// runtime"). Delivery is best effort, as protocols assume: a message in
// hand when a connection breaks, or sent while a queue is full, is lost.
package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// handshake opens every connection: magic, protocol version, cluster name
// and the sender's node ID, so a node never takes messages from another
// cluster or an impostor ID.
const (
	magic           = "LCNT"
	protocolVersion = 1
	// DefaultMaxFrameBytes bounds one message on the wire.
	DefaultMaxFrameBytes = 128 << 20
	// DefaultQueueLen bounds the messages waiting per peer.
	DefaultQueueLen = 1 << 16
)

// Observer receives per-message measurements (bytes on the wire).
type Observer interface {
	MessageSent(kind string, bytes int)
	MessageReceived(kind string, bytes int)
}

// Config configures a transport.
type Config struct {
	Self    wire.NodeID
	Cluster string                 // cluster name, checked in the handshake
	Listen  string                 // address to accept peers on
	Peers   map[wire.NodeID]string // every other node's address
	Codec   *wire.Codec
	// Deliver receives each message; it may block (backpressure on the
	// connection), and is called from one goroutine per inbound connection.
	Deliver func(from wire.NodeID, m wire.Msg)
	// WAN, if set, emulates the world's wide-area delays.
	WAN *WAN
	// TLS, if set, secures every connection both ways; set ClientAuth to
	// tls.RequireAndVerifyClientCert and both Certificates and RootCAs /
	// ClientCAs for mutual TLS between nodes. With TLS every peer must be
	// in Names, and each side of a connection must present a certificate
	// naming the node it is (NodeURI, a URI SAN): a dialed peer whose
	// certificate names another node, or an inbound one claiming a node its
	// certificate does not name, is refused and logged as an error.
	TLS *tls.Config
	// Names are the peers' node names (topo.Node.Name), for TLS.
	Names         map[wire.NodeID]string
	PingInterval  time.Duration // default DefaultPingInterval
	QueueLen      int           // default DefaultQueueLen
	MaxFrameBytes int           // default DefaultMaxFrameBytes
	Observer      Observer
	Log           *slog.Logger
}

// WAN emulation: the sender holds each message for a one-way delay drawn
// from the world's model for the pair of regions, keeping FIFO per link.
type WAN struct {
	Topology *topo.Topology
	Seed     uint64
}

// Transport is one node's network endpoint.
type Transport struct {
	cfg      Config
	ln       net.Listener
	peers    map[wire.NodeID]*peer
	rngMu    sync.Mutex // guards rng and peers' lastRel: Send and the pinger share them
	rng      *rand.Rand // WAN jitter
	log      *slog.Logger
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	blocked  sync.Map // wire.NodeID → struct{}: fault injection
	dropped  atomic.Int64
	received atomic.Int64
}

type outbound struct {
	msg     wire.Msg
	ctrl    []byte    // a control frame (ping, pong) instead of msg
	release time.Time // WAN emulation: not before
}

// Control frames start with ctrlMarker, which no codec message does
// (they start with wire.CodecVersion, never 0).
const (
	ctrlMarker = 0
	ctrlPing   = 1
	ctrlPong   = 2
	// DefaultPingInterval is how often each link measures its round trip.
	DefaultPingInterval = time.Second
)

// RTT summarises a link's measured round trips (ping to pong, including
// WAN emulation when on).
type RTT struct {
	Last, Min, Max, Mean, Std time.Duration
	Count                     int64
}

type peer struct {
	id      wire.NodeID
	addr    string
	q       chan outbound
	lastRel time.Time // latest release time queued, for FIFO under jitter

	rttMu sync.Mutex
	rtt   RTT
	m2    float64 // Welford's running sum of squared deviations, ns²
	mean  float64 // running mean, ns
}

// New listens on cfg.Listen and starts a sender per peer.
func New(cfg Config) (*Transport, error) {
	if cfg.Codec == nil || cfg.Deliver == nil {
		return nil, errors.New("transport: Codec and Deliver are required")
	}
	if cfg.QueueLen == 0 {
		cfg.QueueLen = DefaultQueueLen
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = DefaultPingInterval
	}
	if cfg.MaxFrameBytes == 0 {
		cfg.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.TLS != nil {
		for id := range cfg.Peers {
			if id != cfg.Self && cfg.Names[id] == "" {
				return nil, fmt.Errorf("transport: TLS needs every peer's node name; node %d has none", id)
			}
		}
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("transport: listen %s: %w", cfg.Listen, err)
	}
	if cfg.TLS != nil {
		ln = tls.NewListener(ln, cfg.TLS)
	}
	ctx, cancel := context.WithCancel(context.Background())
	seed := uint64(0)
	if cfg.WAN != nil {
		seed = cfg.WAN.Seed
	}
	t := &Transport{
		cfg: cfg, ln: ln, peers: make(map[wire.NodeID]*peer), log: cfg.Log,
		rng: rand.New(rand.NewPCG(seed, uint64(cfg.Self))), ctx: ctx, cancel: cancel,
		conns: make(map[net.Conn]struct{}),
	}
	for id, addr := range cfg.Peers {
		if id == cfg.Self {
			continue
		}
		p := &peer{id: id, addr: addr, q: make(chan outbound, cfg.QueueLen)}
		t.peers[id] = p
		t.wg.Add(1)
		go t.sendLoop(p)
	}
	t.wg.Add(2)
	go t.acceptLoop()
	go t.pingLoop()
	return t, nil
}

// Addr is the address the transport accepts peers on.
func (t *Transport) Addr() string { return t.ln.Addr().String() }

// Dropped counts messages lost to full queues, blocks and broken links.
func (t *Transport) Dropped() int64 { return t.dropped.Load() }

// Block drops every message to and from peer until Unblock (fault
// injection: isolate a node without touching the OS network).
func (t *Transport) Block(peer wire.NodeID) { t.blocked.Store(peer, struct{}{}) }

// Unblock undoes Block.
func (t *Transport) Unblock(peer wire.NodeID) { t.blocked.Delete(peer) }

// Blocked lists the blocked peers.
func (t *Transport) Blocked() []wire.NodeID {
	var out []wire.NodeID
	t.blocked.Range(func(k, _ any) bool { out = append(out, k.(wire.NodeID)); return true })
	return out
}

func (t *Transport) isBlocked(id wire.NodeID) bool {
	_, ok := t.blocked.Load(id)
	return ok
}

// Send queues m for node to. It never blocks: when the peer's queue is
// full the message is dropped.
func (t *Transport) Send(to wire.NodeID, m wire.Msg) {
	t.enqueue(to, outbound{msg: m})
}

func (t *Transport) enqueue(to wire.NodeID, o outbound) {
	p := t.peers[to]
	if p == nil || t.isBlocked(to) {
		t.dropped.Add(1)
		return
	}
	if w := t.cfg.WAN; w != nil {
		tp := w.Topology
		t.rngMu.Lock()
		d := tp.World.Delay(tp.RegionOf(t.cfg.Self), tp.RegionOf(to), t.rng)
		o.release = time.Now().Add(d)
		if o.release.Before(p.lastRel) {
			o.release = p.lastRel // FIFO: never overtake an earlier message
		}
		p.lastRel = o.release
		t.rngMu.Unlock()
	}
	select {
	case p.q <- o:
	default:
		t.dropped.Add(1)
	}
}

// pingLoop measures every link's round trip once per PingInterval.
func (t *Transport) pingLoop() {
	defer t.wg.Done()
	tick := time.NewTicker(t.cfg.PingInterval)
	defer tick.Stop()
	ids := make([]wire.NodeID, 0, len(t.peers))
	for id := range t.peers {
		ids = append(ids, id)
	}
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-tick.C:
			now := time.Now().UnixNano()
			for _, id := range ids {
				t.enqueue(id, outbound{ctrl: ctrlFrame(ctrlPing, now)})
			}
		}
	}
}

func ctrlFrame(kind byte, nanos int64) []byte {
	return wire.AppendVarint([]byte{ctrlMarker, kind}, nanos)
}

// handleCtrl answers a ping with a pong carrying its timestamp, and turns
// a pong into a round-trip sample.
func (t *Transport) handleCtrl(from wire.NodeID, b []byte) error {
	if len(b) < 2 {
		return errors.New("short control frame")
	}
	d := wire.NewDecoder(b[2:])
	sent := d.Varint()
	if d.Err() != nil || d.Len() != 0 {
		return errors.New("malformed control frame")
	}
	switch b[1] {
	case ctrlPing:
		t.enqueue(from, outbound{ctrl: ctrlFrame(ctrlPong, sent)})
	case ctrlPong:
		rtt := time.Duration(time.Now().UnixNano() - sent)
		if rtt < 0 {
			return nil
		}
		p := t.peers[from]
		p.rttMu.Lock()
		p.rtt.Last = rtt
		if p.rtt.Count == 0 || rtt < p.rtt.Min {
			p.rtt.Min = rtt
		}
		p.rtt.Max = max(p.rtt.Max, rtt)
		p.rtt.Count++
		x := float64(rtt)
		delta := x - p.mean
		p.mean += delta / float64(p.rtt.Count)
		p.m2 += delta * (x - p.mean)
		p.rtt.Mean = time.Duration(p.mean)
		if p.rtt.Count > 1 {
			p.rtt.Std = time.Duration(math.Sqrt(p.m2 / float64(p.rtt.Count-1)))
		}
		p.rttMu.Unlock()
	default:
		return fmt.Errorf("unknown control frame %d", b[1])
	}
	return nil
}

// RTTs returns each peer's measured round trips.
func (t *Transport) RTTs() map[wire.NodeID]RTT {
	out := make(map[wire.NodeID]RTT, len(t.peers))
	for id, p := range t.peers {
		p.rttMu.Lock()
		out[id] = p.rtt
		p.rttMu.Unlock()
	}
	return out
}

// Close stops the transport and waits for its goroutines.
func (t *Transport) Close() error {
	t.mu.Lock()
	t.cancel()
	t.mu.Unlock()
	err := t.ln.Close()
	t.mu.Lock()
	for c := range t.conns {
		_ = c.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
	return err
}

// track registers a live connection so Close can close it; after Close
// has begun it closes the connection instead, so none escapes Close.
func (t *Transport) track(c net.Conn, on bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if on && t.ctx.Err() != nil {
		_ = c.Close()
		return
	}
	if on {
		t.conns[c] = struct{}{}
	} else {
		delete(t.conns, c)
	}
}

// sendLoop owns the connection to one peer: it dials with backoff, then
// writes queued messages in order, holding each until its release time.
func (t *Transport) sendLoop(p *peer) {
	defer t.wg.Done()
	backoff := 50 * time.Millisecond
	var buf []byte
	for t.ctx.Err() == nil {
		conn, err := t.dial(p)
		if err != nil {
			t.log.Debug("transport: dial failed", "peer", p.id, "addr", p.addr, "err", err, "retry_in", backoff)
			select {
			case <-t.ctx.Done():
				return
			case <-time.After(backoff + time.Duration(rand.Int64N(int64(backoff/2)+1))):
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		t.track(conn, true)
		w := bufio.NewWriterSize(conn, 64<<10)
		for err == nil {
			var o outbound
			select {
			case <-t.ctx.Done():
				err = t.ctx.Err()
				continue
			case o = <-p.q:
			}
			if wait := time.Until(o.release); wait > 0 {
				if ferr := w.Flush(); ferr != nil { // let earlier messages go first
					err = ferr
					break
				}
				select {
				case <-time.After(wait):
				case <-t.ctx.Done():
					err = t.ctx.Err()
					continue
				}
			}
			if t.isBlocked(p.id) {
				t.dropped.Add(1)
				continue
			}
			if o.ctrl != nil {
				buf = append(buf[:0], o.ctrl...)
			} else if buf, err = t.cfg.Codec.Append(buf[:0], o.msg); err != nil {
				t.log.Error("transport: cannot encode", "kind", o.msg.Kind(), "err", err)
				err = nil
				continue
			}
			var hdr [binary.MaxVarintLen64]byte
			n := binary.PutUvarint(hdr[:], uint64(len(buf)))
			if _, err = w.Write(hdr[:n]); err == nil {
				_, err = w.Write(buf)
			}
			if err == nil && len(p.q) == 0 {
				err = w.Flush()
			}
			if err != nil {
				t.dropped.Add(1)
			} else if t.cfg.Observer != nil && o.msg != nil {
				t.cfg.Observer.MessageSent(o.msg.Kind(), n+len(buf))
			}
		}
		t.track(conn, false)
		_ = conn.Close()
		if t.ctx.Err() == nil {
			t.log.Info("transport: connection lost; reconnecting", "peer", p.id, "err", err)
		}
	}
}

func (t *Transport) dial(p *peer) (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second, KeepAlive: 15 * time.Second}
	ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
	defer cancel()
	var conn net.Conn
	var err error
	if t.cfg.TLS != nil {
		td := tls.Dialer{NetDialer: &d, Config: t.cfg.TLS}
		conn, err = td.DialContext(ctx, "tcp", p.addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", p.addr)
	}
	if err != nil {
		return nil, err
	}
	if tc, ok := conn.(*tls.Conn); ok {
		if err := t.checkIdentity(tc, p.id); err != nil {
			conn.Close()
			t.log.Error("transport: refusing peer", "peer", p.id, "addr", p.addr, "err", err)
			return nil, err
		}
	}
	hs := []byte(magic)
	hs = append(hs, protocolVersion)
	hs = wire.AppendString(hs, t.cfg.Cluster)
	hs = wire.AppendVarint(hs, int64(t.cfg.Self))
	_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write(hs); err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetWriteDeadline(time.Time{})
	return conn, nil
}

func (t *Transport) acceptLoop() {
	defer t.wg.Done()
	for {
		conn, err := t.ln.Accept()
		if err != nil {
			if t.ctx.Err() != nil {
				return
			}
			t.log.Warn("transport: accept", "err", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		t.track(conn, true)
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			defer t.track(conn, false)
			defer conn.Close()
			err := t.readLoop(conn)
			switch {
			case err == nil || t.ctx.Err() != nil || errors.Is(err, io.EOF):
			case errors.Is(err, ErrIdentity):
				t.log.Error("transport: refusing inbound peer", "remote", conn.RemoteAddr().String(), "err", err)
			default:
				t.log.Warn("transport: inbound connection closed", "remote", conn.RemoteAddr().String(), "err", err)
			}
		}()
	}
}

// readLoop checks the handshake, then decodes and delivers frames.
func (t *Transport) readLoop(conn net.Conn) error {
	r := bufio.NewReaderSize(conn, 64<<10)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	head := make([]byte, len(magic)+1)
	if _, err := io.ReadFull(r, head); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if string(head[:len(magic)]) != magic {
		return fmt.Errorf("handshake: not a Lightcone peer (magic %q)", head[:len(magic)])
	}
	if head[len(magic)] != protocolVersion {
		return fmt.Errorf("handshake: peer speaks transport version %d; this node speaks %d", head[len(magic)], protocolVersion)
	}
	cluster, err := readString(r, 256)
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if cluster != t.cfg.Cluster {
		return fmt.Errorf("handshake: peer belongs to cluster %q, not %q", cluster, t.cfg.Cluster)
	}
	fromV, err := binary.ReadVarint(r)
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	from := wire.NodeID(fromV)
	if _, ok := t.peers[from]; !ok {
		return fmt.Errorf("handshake: unknown peer node %d", from)
	}
	if tc, ok := conn.(*tls.Conn); ok {
		if err := t.checkIdentity(tc, from); err != nil {
			return err
		}
	}
	_ = conn.SetReadDeadline(time.Time{})
	var buf []byte
	for {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return err
		}
		if n > uint64(t.cfg.MaxFrameBytes) {
			return fmt.Errorf("frame of %d bytes exceeds the %d-byte limit", n, t.cfg.MaxFrameBytes)
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return err
		}
		if t.isBlocked(from) {
			continue
		}
		if len(buf) > 0 && buf[0] == ctrlMarker {
			if err := t.handleCtrl(from, buf); err != nil {
				return err
			}
			continue
		}
		m, err := t.cfg.Codec.Decode(buf)
		if err != nil {
			return err // a peer that sends garbage loses its connection
		}
		t.received.Add(1)
		if t.cfg.Observer != nil {
			t.cfg.Observer.MessageReceived(m.Kind(), int(n))
		}
		t.cfg.Deliver(from, m)
	}
}

func readString(r *bufio.Reader, max int) (string, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return "", err
	}
	if n > uint64(max) {
		return "", fmt.Errorf("string of %d bytes exceeds %d", n, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b), nil
}

// ErrIdentity marks a peer refused because its TLS certificate does not
// name the node it is, or claims to be.
var ErrIdentity = errors.New("transport: peer certificate does not name its node")

// NodeURI is the URI SAN that names node name in a peer certificate:
// lightcone://node/NAME.
func NodeURI(name string) string { return "lightcone://node/" + name }

// checkIdentity checks that the verified certificate the peer presented on
// c names node id. The handshake has run: dialing completes it, and the
// acceptor has read from c.
func (t *Transport) checkIdentity(c *tls.Conn, id wire.NodeID) error {
	want := NodeURI(t.cfg.Names[id])
	certs := c.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return fmt.Errorf("%w: node %d (%s) presented no certificate", ErrIdentity, id, want)
	}
	var names []string
	for _, u := range certs[0].URIs {
		if u.String() == want {
			return nil
		}
		names = append(names, u.String())
	}
	return fmt.Errorf("%w: node %d needs a certificate with URI SAN %s; it presented %q (URI SANs %v)", ErrIdentity, id, want, certs[0].Subject.CommonName, names)
}
