package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lightcone/lightcone/internal/api"
	"github.com/lightcone/lightcone/internal/wire"
)

// Defaults for Config's zero fields.
const (
	DefaultAddr          = "127.0.0.1:6379"
	DefaultMaxKeyBytes   = 64 << 10 // as Cassandra's partition key limit
	DefaultMaxValueBytes = 64 << 20
	DefaultKeyspace      = "default"
)

// maxInflight bounds the commands one connection may have awaiting replies:
// past it the connection stops reading, writes what it owes and flushes,
// so a client that pipelines without reading cannot grow our queue.
const maxInflight = 1024

// ErrServerClosed is returned by Serve and ListenAndServe after Close.
var ErrServerClosed = errors.New("resp: server closed")

// Config configures a Server. The zero value of each field selects its
// default.
type Config struct {
	// Addr is the TCP address ListenAndServe listens on. Default
	// DefaultAddr (loopback only: set it to serve other hosts).
	Addr string
	// RequirePass, if set, is the password of the "default" user: clients
	// must AUTH (or HELLO ... AUTH) before any command but AUTH, HELLO and
	// QUIT, as with Redis's requirepass. Default: no password.
	RequirePass string
	// MaxKeyBytes is the longest key accepted, in bytes. Default
	// DefaultMaxKeyBytes (64 KiB).
	MaxKeyBytes int
	// MaxValueBytes is the longest value accepted, in bytes, checked both
	// on the client's value and on its stored form (a hash's whole
	// encoding). Default DefaultMaxValueBytes (64 MiB).
	MaxValueBytes int
	// MaxBulkBytes is the protocol's bulk string limit, in bytes: a larger
	// argument is a protocol error that closes the connection, whereas a
	// value over MaxValueBytes but within this limit is read whole and
	// refused with an error reply. Default DefaultMaxBulkBytes (512 MiB).
	MaxBulkBytes int64
	// MaxMultibulkLen is the most arguments one command may have. Default
	// DefaultMaxMultibulkLen.
	MaxMultibulkLen int
	// Keyspace is the keyspace connections start in (LC.KEYSPACE changes
	// it per connection). Default DefaultKeyspace.
	Keyspace string
	// Read and Write are the consistency levels connections start with
	// (LC.CONSISTENCY changes them per connection). Default
	// wire.LevelDefault: the keyspace's configured level.
	Read, Write wire.Level
	// DiscardSortedSetWrites makes ZADD and ZREM succeed without storing
	// anything, replying 0 ("nothing added/removed"). YCSB's Redis binding
	// calls them to keep a scan index it needs only for workload E;
	// Lightcone keeps no sorted sets. Default false: they are unknown
	// commands.
	DiscardSortedSetWrites bool
	// Log receives connection-level events. Default: discard.
	Log *slog.Logger
	// Info returns extra fields for INFO's "# Lightcone" section. Optional.
	Info func() map[string]string
	// Now is the clock that TTLs are set and checked against. Default
	// time.Now; tests inject a fake.
	Now func() time.Time
}

// EnsureDefaults fills in the zero fields of c.
func (c *Config) EnsureDefaults() {
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.MaxKeyBytes <= 0 {
		c.MaxKeyBytes = DefaultMaxKeyBytes
	}
	if c.MaxValueBytes <= 0 {
		c.MaxValueBytes = DefaultMaxValueBytes
	}
	if c.MaxBulkBytes <= 0 {
		c.MaxBulkBytes = DefaultMaxBulkBytes
	}
	if c.MaxMultibulkLen <= 0 {
		c.MaxMultibulkLen = DefaultMaxMultibulkLen
	}
	if c.Keyspace == "" {
		c.Keyspace = DefaultKeyspace
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Server serves the Redis protocol (RESP2) over an api.Backend. Its methods
// are safe for concurrent use.
type Server struct {
	cfg   Config
	b     api.Backend
	start time.Time
	quit  chan struct{} // closed by Close; unblocks handlers awaiting replies

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	wg        sync.WaitGroup // one per Serve loop and per connection

	nconns atomic.Int64
}

// NewServer returns a Server that submits requests to b.
func NewServer(cfg Config, b api.Backend) *Server {
	cfg.EnsureDefaults()
	return &Server{
		cfg:       cfg,
		b:         b,
		start:     cfg.Now(),
		quit:      make(chan struct{}),
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[*conn]struct{}),
	}
}

// ListenAndServe listens on cfg.Addr and serves until Close.
func (s *Server) ListenAndServe() error {
	l, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("resp: %w", err)
	}
	return s.Serve(l)
}

// Serve accepts connections on l, one goroutine each, until Close or a
// permanent accept error. It closes l on return and returns
// ErrServerClosed after Close.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
		l.Close()
	}()

	var backoff time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			// Running out of file descriptors is transient: wait for
			// connections to close, as net/http does.
			var ne net.Error
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.As(err, &ne) && ne.Timeout() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.cfg.Log.Warn("resp: accept", "err", err, "retry_in", backoff)
				select {
				case <-time.After(backoff):
				case <-s.quit:
				}
				continue
			}
			return fmt.Errorf("resp: accept: %w", err)
		}
		backoff = 0
		c := s.newConn(nc)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return ErrServerClosed
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go c.serve()
	}
}

// Addr returns the address of a listener being served, or nil if none.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.listeners { // lint:order-independent: any listener will do
		return l.Addr()
	}
	return nil
}

// Close closes the listeners and every connection, and waits for their
// goroutines to return. Replies still owed by the backend are abandoned.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	close(s.quit)
	for l := range s.listeners { // lint:order-independent: closing all
		l.Close()
	}
	for c := range s.conns { // lint:order-independent: closing all
		c.nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// conn is one client connection, served by one goroutine.
type conn struct {
	s  *Server
	nc net.Conn
	br *bufio.Reader
	rd *Reader
	w  *Writer

	id       wire.ClientID
	nextReq  wire.RequestID
	authed   bool
	name     string
	keyspace string
	read     wire.Level
	write    wire.Level

	// pending holds, in command order, the replies not yet written.
	pending []pending

	// Backend replies arrive on the backend's goroutine into arrived, and
	// signal wakes the connection (one channel for all its requests, so a
	// request costs no channel of its own).
	mu      sync.Mutex
	arrived map[wire.RequestID]*wire.Reply
	signal  chan struct{}
	done    func(*wire.Reply) // c.onReply, bound once

	// unsent collects the requests of pipelined commands; they go to the
	// backend in one hand-off before the connection waits for any reply.
	unsent []*wire.Request
	quit   bool // QUIT received or the server is closing: stop after writing
}

// pending is one command's reply: awaiting the backend replies of calls,
// then written by write.
type pending struct {
	calls []wire.RequestID
	write func(w *Writer, reps []*wire.Reply)
}

func (s *Server) newConn(nc net.Conn) *conn {
	c := &conn{}
	// Before the reader blocks on the socket, queued requests go to the
	// backend: a command whose rest has not arrived must not hold back the
	// complete ones before it.
	br := bufio.NewReaderSize(submitFirst{c, nc}, 16<<10)
	rd := NewReader(br)
	rd.MaxBulkBytes = s.cfg.MaxBulkBytes
	rd.MaxMultibulkLen = s.cfg.MaxMultibulkLen
	*c = conn{
		arrived:  make(map[wire.RequestID]*wire.Reply),
		signal:   make(chan struct{}, 1),
		s:        s,
		nc:       nc,
		br:       br,
		rd:       rd,
		w:        NewWriter(bufio.NewWriterSize(nc, 16<<10)),
		id:       s.b.NewClientID(),
		authed:   s.cfg.RequirePass == "",
		keyspace: s.cfg.Keyspace,
		read:     s.cfg.Read,
		write:    s.cfg.Write,
	}
	c.done = c.onReply
	return c
}

// submitFirst sends a connection's queued requests before each read from
// its socket.
type submitFirst struct {
	c *conn
	r io.Reader
}

func (s submitFirst) Read(p []byte) (int, error) {
	s.c.sendUnsent()
	return s.r.Read(p)
}

// onReply records a backend reply; it runs on the backend's goroutine and
// never blocks.
func (c *conn) onReply(r *wire.Reply) {
	c.mu.Lock()
	c.arrived[r.ID] = r
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
}

// serve runs the connection. It parses and submits commands while input is
// buffered, so a pipeline's requests are all in flight at once; when the
// input runs dry it writes the replies in command order and flushes.
func (c *conn) serve() {
	c.s.nconns.Add(1)
	log := c.s.cfg.Log.With("client", int64(c.id), "remote", c.nc.RemoteAddr().String())
	defer func() {
		c.nc.Close()
		c.s.nconns.Add(-1)
		c.s.mu.Lock()
		delete(c.s.conns, c)
		c.s.mu.Unlock()
		c.s.wg.Done()
	}()
	for !c.quit {
		if c.br.Buffered() == 0 || len(c.pending) >= maxInflight {
			if err := c.flush(); err != nil {
				log.Debug("resp: write", "err", err)
				return
			}
		}
		args, err := c.rd.ReadCommand()
		if err != nil {
			var pe *ProtocolError
			if errors.As(err, &pe) {
				log.Info("resp: protocol error; closing connection", "err", pe.Msg)
				c.awaitPending()
				c.w.WriteError(pe.Error())
				c.w.Flush()
			} else if err != io.EOF && !c.s.isClosed() {
				log.Debug("resp: read", "err", err)
			}
			return
		}
		c.exec(args)
	}
	c.flush()
}

// flush writes every pending reply and flushes the connection.
func (c *conn) flush() error {
	c.awaitPending()
	return c.w.Flush()
}

// awaitPending waits for the pending replies and writes them, in order,
// without flushing. It is the barrier before a multi-step command.
func (c *conn) awaitPending() {
	c.sendUnsent()
	for i := range c.pending {
		p := &c.pending[i]
		reps := make([]*wire.Reply, len(p.calls))
		for j, id := range p.calls {
			r, ok := c.wait(id)
			if !ok {
				c.pending = c.pending[:0]
				return
			}
			reps[j] = r
		}
		p.write(c.w, reps)
		c.pending[i] = pending{}
	}
	c.pending = c.pending[:0]
}

// wait returns the reply to request id, or false if the server closes
// first.
func (c *conn) wait(id wire.RequestID) (*wire.Reply, bool) {
	for {
		c.mu.Lock()
		r, ok := c.arrived[id]
		if ok {
			delete(c.arrived, id)
		}
		c.mu.Unlock()
		if ok {
			if r == nil {
				r = &wire.Reply{Err: &wire.Error{Code: wire.ErrUnavailable, Msg: "backend returned no reply"}}
			}
			return r, true
		}
		select {
		case <-c.signal:
		case <-c.s.quit:
			c.quit = true
			return nil, false
		}
	}
}

// submit queues req for the backend and returns its ID, under which its
// reply arrives. Requests leave in order, together, when the connection
// next waits (sendUnsent).
func (c *conn) submit(req *wire.Request) wire.RequestID {
	c.nextReq++
	req.ID = c.nextReq
	req.Client = c.id
	if req.Keyspace == "" {
		req.Keyspace = c.keyspace
	}
	c.unsent = append(c.unsent, req)
	return req.ID
}

// sendUnsent hands the queued requests to the backend.
func (c *conn) sendUnsent() {
	if len(c.unsent) == 0 {
		return
	}
	if bs, ok := c.s.b.(api.BatchSubmitter); ok && len(c.unsent) > 1 {
		bs.SubmitBatch(slices.Clone(c.unsent), c.done)
	} else {
		for _, req := range c.unsent {
			c.s.b.Submit(req, c.done)
		}
	}
	clear(c.unsent)
	c.unsent = c.unsent[:0]
}

// reply queues a reply that needs no backend call.
func (c *conn) reply(write func(w *Writer)) {
	c.pending = append(c.pending, pending{write: func(w *Writer, _ []*wire.Reply) { write(w) }})
}

// replyError queues an error reply.
func (c *conn) replyError(msg string) {
	c.reply(func(w *Writer) { w.WriteError(msg) })
}

// await submits reqs now and queues write, to run with their replies in
// the same order once they have all arrived.
func (c *conn) await(reqs []*wire.Request, write func(w *Writer, reps []*wire.Reply)) {
	p := pending{calls: make([]wire.RequestID, len(reqs)), write: write}
	for i, r := range reqs {
		p.calls[i] = c.submit(r)
	}
	c.pending = append(c.pending, p)
}

// call submits reqs and waits for their replies. Multi-step commands use
// it after awaitPending, so they observe this connection's earlier
// commands. ok is false if the server is closing.
func (c *conn) call(reqs ...*wire.Request) (reps []*wire.Reply, ok bool) {
	ids := make([]wire.RequestID, len(reqs))
	for i, r := range reqs {
		ids[i] = c.submit(r)
	}
	c.sendUnsent()
	reps = make([]*wire.Reply, len(reqs))
	for i, id := range ids {
		if reps[i], ok = c.wait(id); !ok {
			return nil, false
		}
	}
	return reps, true
}
