package resp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lightcone/lightcone/internal/api"
	"github.com/lightcone/lightcone/internal/ratelog"
	"github.com/lightcone/lightcone/internal/slab"
	"github.com/lightcone/lightcone/internal/wire"
)

// Defaults for Config's zero fields.
const (
	DefaultAddr          = "127.0.0.1:6379"
	DefaultMaxKeyBytes   = 64 << 10 // as Cassandra's partition key limit
	DefaultMaxValueBytes = 64 << 20
	DefaultKeyspace      = "default"

	// DefaultMaxClients is Redis's maxclients default.
	DefaultMaxClients = 10000
	// DefaultQueryBufferLimit is Redis's client-query-buffer-limit scaled
	// to our value limit: Redis allows 1 GiB for its 512 MiB bulk strings,
	// we allow two maximal values (an MSET of two, or one SET pipelined
	// behind another).
	DefaultQueryBufferLimit = 2 * DefaultMaxValueBytes
	// DefaultOutputBufferLimit is the reply bytes a connection holds
	// before it stops reading commands.
	DefaultOutputBufferLimit = 2 * DefaultMaxValueBytes
	// DefaultBufferBudget is the server-wide total of client query and
	// reply buffers (Redis 7's maxmemory-clients, which is off by default
	// there; a database that must not be pushed out of memory by its
	// clients wants one).
	DefaultBufferBudget = 1 << 30

	// ReservedFDs is the number of file descriptors MaxClientsFor keeps for
	// everything but RESP clients: listeners, peers, gRPC and HTTP
	// clients, the store's WAL, manifest and tables.
	ReservedFDs = 256
)

// replyOverheadBytes is what a reply costs a connection's output budget
// beyond its value: the wire.Reply and its bookkeeping.
const replyOverheadBytes = 64

// multiKeySlice is how many keys of one multi-key command (MGET, EXISTS,
// DEL, MSET) go to the backend at once. Each slice is one hand-off to the
// node's event loop, like a pipeline of maxInflight commands, so a command
// naming a million keys takes turns with other clients instead of holding
// the loop, and what the connection holds is one slice's requests and
// replies.
const multiKeySlice = 1024

const msgMaxClients = "ERR max number of clients reached"

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
	// argument is a protocol error that closes the connection, whereas an
	// argument over MaxValueBytes (and MaxKeyBytes) but within this limit
	// is discarded as it arrives and refused with an error reply. Default
	// DefaultMaxBulkBytes (512 MiB).
	MaxBulkBytes int64
	// MaxMultibulkLen is the most arguments one command may have. Default
	// DefaultMaxMultibulkLen.
	MaxMultibulkLen int
	// An argument longer than both MaxValueBytes and MaxKeyBytes can be
	// neither, so it is read and discarded as it arrives, never held, and
	// its command is refused with "ERR argument too large (N bytes; max
	// M)"; the connection stays open.

	// MaxClients is the most connections served at once (Redis's
	// maxclients). One more is answered "ERR max number of clients
	// reached" and closed. Default DefaultMaxClients; MaxClientsFor fits it
	// to the process's descriptor limit.
	MaxClients int
	// QueryBufferLimit is the most bytes of command arguments one
	// connection holds at once, each argument counted as its length plus
	// ArgOverheadBytes (Redis's client-query-buffer-limit). A pipeline that
	// reaches it waits until the replies it is owed are written; one
	// command over it is read and discarded and refused with "ERR command
	// too large: ...". Default DefaultQueryBufferLimit (128 MiB).
	QueryBufferLimit int64
	// OutputBufferLimit is the reply bytes one connection holds before it
	// stops reading commands and writes what it owes. Replies to commands
	// already submitted still arrive: up to 1024 pipelined commands, and a
	// multi-key command's current slice of 1024 keys. Default
	// DefaultOutputBufferLimit (128 MiB).
	OutputBufferLimit int64
	// BufferBudget is the most bytes all connections together hold in
	// command arguments and replies. A connection that would go over it
	// first writes what it owes; if the budget is still short, its
	// command is read and discarded and refused with "OOM command not
	// allowed: ...", which a client may retry. Default DefaultBufferBudget
	// (1 GiB).
	BufferBudget int64
	// Keyspace is the keyspace connections start in (LC.KEYSPACE changes
	// it per connection). Default DefaultKeyspace.
	Keyspace string
	// Keyspaces, if set, are the keyspaces LC.KEYSPACE accepts: it
	// refuses any other name at once, listing these. Default nil: any
	// name, refused by the backend on the connection's next command.
	Keyspaces []string
	// Read and Write are the consistency levels connections start with
	// (LC.CONSISTENCY changes them per connection). Default
	// wire.LevelDefault: the keyspace's configured level.
	Read, Write wire.Level
	// LastWriterWins reports whether a keyspace opted in to non-atomic
	// read-modify-write (`rmw: last_writer_wins`): its INCR, SET NX, HSET
	// and the rest are a get then a plain put, which two clients can both
	// win. Nil, or false: they are conditional writes (modify.go), which
	// keyspaces that cannot order a key's writes refuse.
	LastWriterWins func(keyspace string) bool
	// Scanner, if set, lists the keys this node holds, for SCAN, KEYS and
	// DBSIZE; without it they reply "ERR not supported by lightcone".
	Scanner api.Scanner
	// Log receives connection-level events. Default: discard.
	Log *slog.Logger
	// Info returns extra fields for INFO's "# Lightcone" section. Optional.
	Info func() map[string]string
	// Now is the clock that TTLs are set and checked against. Default
	// time.Now; tests inject a fake.
	Now func() time.Time
	// EventLoops is how many event loops serve plain TCP connections
	// (loop_linux.go): each waits on an epoll set of its own, as Redis's
	// loop does, instead of a goroutine per connection waiting in Go's
	// poller. 0: DefaultEventLoops; negative: none, a goroutine per
	// connection (also on platforms other than Linux, and for TLS).
	EventLoops int
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
	if c.MaxClients <= 0 {
		c.MaxClients = DefaultMaxClients
	}
	if c.QueryBufferLimit <= 0 {
		c.QueryBufferLimit = DefaultQueryBufferLimit
	}
	if c.OutputBufferLimit <= 0 {
		c.OutputBufferLimit = DefaultOutputBufferLimit
	}
	if c.BufferBudget <= 0 {
		c.BufferBudget = DefaultBufferBudget
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
	// ctx is cancelled by Close, ending a Scanner call under way.
	ctx    context.Context
	cancel context.CancelFunc
	scans  cursors // SCAN's cursors
	// unsafeCachedInFlight lets connections answer reads from published
	// replies with their own requests in flight (the teeth test).
	unsafeCachedInFlight atomic.Bool

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	wg        sync.WaitGroup // one per Serve loop and per connection

	// spare is a descriptor held back for the moment the process runs out
	// of them: closed to accept one waiting client, tell it why it is
	// refused and close it, then taken again (see shed).
	spareMu sync.Mutex
	spare   *os.File
	// shedLog and budgetLog rate-limit warnings that can repeat per client
	// or per command.
	shedLog, budgetLog ratelog.Limiter

	// loops are the event loops (Config.EventLoops), started by the first
	// Serve; next picks the loop a connection joins.
	loops   []*loop
	next    int
	closing atomic.Bool // set by Close, for the loops
	// onLoops counts the connections on event loops; detached, those that
	// left one for a goroutine of their own.
	onLoops, detached atomic.Int64

	nconns   atomic.Int64 // connections being served
	rejected atomic.Int64 // connections refused by MaxClients
	buffered atomic.Int64 // bytes all connections hold, against BufferBudget
}

// MaxClientsFor returns the most clients a process may serve when it
// wants want and may open nofile descriptors (RLIMIT_NOFILE): want, or
// nofile less ReservedFDs if that is smaller, and never below half of
// nofile. Accepting past the descriptor limit fails with EMFILE and leaves
// new clients hanging; a client refused by MaxClients is told why.
func MaxClientsFor(want int, nofile uint64) int {
	if nofile >= 1<<31 {
		return want
	}
	n := int(nofile) - ReservedFDs
	n = max(n, int(nofile)/2, 1)
	return min(want, n)
}

// Validate reports settings that cannot work together (after defaults):
// a query buffer limit below the largest command a client may need to send
// (a SET of the longest key and value), or a server-wide budget below one
// connection's limit.
func (c Config) Validate() error {
	c.EnsureDefaults()
	if need := int64(c.MaxKeyBytes) + int64(c.MaxValueBytes) + 3*ArgOverheadBytes + 3; c.QueryBufferLimit < need {
		return fmt.Errorf("client_query_buffer_limit %d is below the largest command a client may send (SET with a %d-byte key and a %d-byte value: %d bytes); raise it", c.QueryBufferLimit, c.MaxKeyBytes, c.MaxValueBytes, need)
	}
	if c.BufferBudget < c.QueryBufferLimit {
		return fmt.Errorf("client_buffer_budget %d is below client_query_buffer_limit %d: one client could never send its largest command; raise the budget", c.BufferBudget, c.QueryBufferLimit)
	}
	return nil
}

// NewServer returns a Server that submits requests to b.
func NewServer(cfg Config, b api.Backend) *Server {
	cfg.EnsureDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		ctx:       ctx,
		cancel:    cancel,
		shedLog:   ratelog.Limiter{Every: logEvery},
		budgetLog: ratelog.Limiter{Every: logEvery},
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
	s.startLoops()
	s.mu.Unlock()
	s.spareMu.Lock()
	if s.spare == nil {
		s.spare, _ = os.Open(os.DevNull)
	}
	s.spareMu.Unlock()
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
			// Running out of file descriptors is transient: refuse the
			// waiting client with the spare descriptor, so it is told
			// instead of hanging, then wait for connections to close, as
			// net/http does.
			outOfFDs := errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
			if outOfFDs {
				s.shed(l)
			}
			var ne net.Error
			if outOfFDs || errors.As(err, &ne) && ne.Timeout() {
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
		if s.nconns.Add(1) > int64(s.cfg.MaxClients) {
			s.nconns.Add(-1)
			s.rejected.Add(1)
			s.wg.Add(1)
			go s.refuse(nc)
			continue
		}
		c := s.newConn(nc)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			s.nconns.Add(-1)
			nc.Close()
			return ErrServerClosed
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		var lp *loop
		if len(s.loops) > 0 {
			lp = s.loops[s.next%len(s.loops)]
			s.next++
		}
		s.mu.Unlock()
		if lp == nil || !lp.adopt(c) {
			go c.serve(nil)
		}
	}
}

// DefaultEventLoops is the number of event loops a server with procs
// Go processors (GOMAXPROCS) runs unless told: one on one processor, where
// the loop beat a goroutine per connection on every row measured; none on
// more, where a goroutine per connection parses and writes beside the
// node's loop and SETs were faster that way (docs/performance.md,
// "Event loops for RESP").
func DefaultEventLoops(procs int) int {
	if procs == 1 {
		return 1
	}
	return 0
}

// loopCount is the number of event loops running.
func (s *Server) loopCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.loops)
}

// startLoops starts the event loops, once; s.mu is held.
func (s *Server) startLoops() {
	if s.loops != nil {
		return
	}
	n := s.cfg.EventLoops
	if n == 0 {
		n = DefaultEventLoops(runtime.GOMAXPROCS(0))
	}
	if !haveLoops {
		n = 0
	}
	s.loops = make([]*loop, 0, max(n, 0))
	for range n {
		lp, err := newLoop(s)
		if err != nil {
			s.cfg.Log.Warn("resp: no event loop; serving each connection from a goroutine", "err", err)
			break
		}
		s.loops = append(s.loops, lp)
		s.wg.Add(1)
		go lp.run()
	}
}

// refuse tells a client over MaxClients why it is refused, and closes its
// connection, as Redis does. It runs on its own goroutine: over TLS the
// write waits for a handshake, which must not hold up the accept loop.
func (s *Server) refuse(nc net.Conn) {
	defer s.wg.Done()
	defer nc.Close()
	s.cfg.Log.Debug("resp: refusing a client: maxclients reached", "remote", nc.RemoteAddr().String(), "maxclients", s.cfg.MaxClients)
	_ = nc.SetDeadline(time.Now().Add(time.Second))
	_, _ = io.WriteString(nc, "-"+msgMaxClients+"\r\n")
}

// logEvery is how often a warning that can repeat per client or per
// command is logged.
const logEvery = 10 * time.Second

// shedWait is how long shed waits for a client to refuse: accept fails
// for want of a descriptor before it looks for a waiting client, so there
// may be none.
const shedWait = 5 * time.Millisecond

// shed runs when accepting failed because the process has no descriptor
// left (EMFILE, ENFILE: other connections, peers, the store's files): it
// gives up the spare descriptor, accepts a client waiting in the listen
// backlog with it (for at most shedWait; only on listeners that take a
// deadline, as TCP listeners do), refuses it as over maxclients (on this
// goroutine, so the descriptor is free again before the spare is taken
// back). Without it the client would wait, unanswered, until descriptors
// are freed.
func (s *Server) shed(l net.Listener) {
	dl, ok := l.(interface{ SetDeadline(time.Time) error })
	if !ok {
		return
	}
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	if s.spare == nil {
		// Taken by someone else last time: try again for next time.
		s.spare, _ = os.Open(os.DevNull)
		return
	}
	s.spare.Close()
	s.spare = nil
	defer func() { s.spare, _ = os.Open(os.DevNull) }()
	_ = dl.SetDeadline(time.Now().Add(shedWait))
	nc, err := l.Accept()
	_ = dl.SetDeadline(time.Time{})
	if err != nil {
		return
	}
	s.rejected.Add(1)
	if ok, suppressed := s.shedLog.AllowN(); ok {
		s.cfg.Log.Warn("resp: out of file descriptors; refusing new clients with \""+msgMaxClients+"\" (logged once per 10s)", "open_clients", s.nconns.Load(), "suppressed", suppressed)
	}
	s.wg.Add(1)
	s.refuse(nc)
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
	s.closing.Store(true)
	close(s.quit)
	s.cancel()
	for _, lp := range s.loops {
		lp.kick()
	}
	for l := range s.listeners { // lint:order-independent: closing all
		l.Close()
	}
	for c := range s.conns { // lint:order-independent: closing all
		c.nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.spareMu.Lock()
	if s.spare != nil {
		s.spare.Close()
		s.spare = nil
	}
	s.spareMu.Unlock()
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
	// reps and one are awaitPending's scratch for one command's calls'
	// replies, and for the call of a command that made one (await1).
	reps []*wire.Reply
	one  [1]wire.RequestID

	// Backend replies arrive on the backend's goroutine into arrived, and
	// signal wakes the connection (one channel for all its requests, so a
	// request costs no channel of its own) when the reply it sleeps for,
	// waitFor, has come: one wake-up for a pipeline's replies, not one
	// per reply.
	owed       atomic.Int64 // requests submitted and not yet replied to
	mu         sync.Mutex
	arrived    []*wire.Reply  // in arrival order
	waitFor    wire.RequestID // 0: the connection is not asleep
	replyBytes int64          // of replies arrived since the last release, against OutputBufferLimit
	gone       bool           // serve has returned: replies are dropped, not counted
	signal     chan struct{}
	done       func(*wire.Reply) // c.onReply, bound once

	// got holds the replies the connection took from arrived and has not
	// yet waited for, from gotHead on (nil: waited for).
	got     []*wire.Reply
	gotHead int

	// held is the bytes of arguments of the commands read since the last
	// release, against QueryBufferLimit (and, with replyBytes, the
	// server's BufferBudget).
	held int64

	// unsent collects the requests of pipelined commands; they go to the
	// backend in one hand-off before the connection waits for any reply.
	unsent []*wire.Request
	quit   bool // QUIT received or the server is closing: stop after writing

	// holds are the rows this connection acquired (LC.ACQUIRE) and has not
	// released: closing the connection releases them (releaseHolds), so a
	// client that disconnects frees its rows at once instead of after the
	// protocol's hold timeout.
	holds map[hold]struct{}

	// multi is the open MULTI's queued commands (txn.go); nil outside one.
	multi *multiState

	// reqs carves the requests of GET and SET (getReq, putReq).
	reqs slab.Slab[wire.Request]

	// cached is the backend, if it answers some reads without its loop
	// (cachedRead); hits counts those answered since the last flush, all
	// at hitLevel.
	cached   api.CachedReader
	hits     int
	hitLevel wire.Level

	// A connection on an event loop (loop.go) has lp set, under mu, and
	// reads and writes its descriptor fd without Go's poller; fd is -1 on
	// a connection served by its own goroutine.
	lp *loop
	fd int
	// readable: the descriptor may hold bytes not yet read (edge-triggered
	// readiness); hup: the client has closed its side, or the socket
	// failed, so reads go on to the end; eof: a read found the end.
	readable, hup, eof bool
	// overflow holds reply bytes the socket would not take at once; the
	// connection then leaves its loop for a goroutine of its own
	// (detach), which writes them first.
	overflow []byte
}

// hold is one row held by a connection: a key in a keyspace.
type hold struct{ keyspace, key string }

// pending is one command's reply: awaiting the backend replies of calls,
// then written by write. A read of one key (readKind), the commonest
// command, needs neither a slice nor a closure: it awaits one and
// writes with show (when show is set).
type pending struct {
	calls []wire.RequestID
	write func(w *Writer, reps []*wire.Reply)
	// rep, if set, is a read's reply already in hand (CachedReader).
	rep *wire.Reply

	one  wire.RequestID
	kind byte
	show func(w *Writer, v value, found bool)
}

func (s *Server) newConn(nc net.Conn) *conn {
	c := &conn{}
	// Before the reader blocks on the socket, queued requests go to the
	// backend: a command whose rest has not arrived must not hold back the
	// complete ones before it.
	br := bufio.NewReaderSize(connSource{c}, 16<<10)
	rd := NewReader(br)
	rd.MaxBulkBytes = s.cfg.MaxBulkBytes
	rd.MaxMultibulkLen = s.cfg.MaxMultibulkLen
	rd.MaxArgBytes = int64(max(s.cfg.MaxValueBytes, s.cfg.MaxKeyBytes))
	rd.Budget = c.budget
	rd.Borrow = true // exec hands commands that keep arguments copies
	*c = conn{
		signal:   make(chan struct{}, 1),
		s:        s,
		nc:       nc,
		br:       br,
		rd:       rd,
		w:        NewWriter(bufio.NewWriterSize(connSink{c}, 16<<10)),
		fd:       -1,
		id:       s.b.NewClientID(),
		authed:   s.cfg.RequirePass == "",
		keyspace: s.cfg.Keyspace,
		read:     s.cfg.Read,
		write:    s.cfg.Write,
	}
	c.done = c.onReply
	c.cached, _ = s.b.(api.CachedReader)
	return c
}

// connSource is what a connection's bufio.Reader reads: its socket,
// through Go's poller or, on an event loop, directly (loopRead). It sends
// the connection's queued requests before each read.
type connSource struct{ c *conn }

func (s connSource) Read(p []byte) (int, error) {
	s.c.sendUnsent()
	if s.c.fd >= 0 {
		return s.c.loopRead(p)
	}
	return s.c.nc.Read(p)
}

// connSink is what a connection's bufio.Writer writes to: its socket,
// through Go's poller or, on an event loop, directly (loopWrite).
type connSink struct{ c *conn }

func (s connSink) Write(p []byte) (int, error) {
	if s.c.fd >= 0 {
		return s.c.loopWrite(p)
	}
	return s.c.nc.Write(p)
}

// onReply records a backend reply; it runs on the backend's goroutine and
// never blocks.
func (c *conn) onReply(r *wire.Reply) {
	c.mu.Lock()
	if c.gone {
		c.mu.Unlock()
		return
	}
	c.arrived = append(c.arrived, r)
	c.owed.Add(-1)
	n := replySize(r)
	c.replyBytes += n
	c.s.buffered.Add(n)
	wake := r.ID == c.waitFor
	if wake {
		c.waitFor = 0
	}
	lp := c.lp
	c.mu.Unlock()
	if wake && lp != nil {
		lp.wake(c)
	} else if wake {
		select {
		case c.signal <- struct{}{}:
		default:
		}
	}
}

// serve runs the connection on its goroutine, from args if not nil (a
// command an event loop read and left to it: serveFrom), and ends it. It
// parses and submits commands while input is buffered, so a pipeline's
// requests are all in flight at once; when the input runs dry it writes
// the replies in command order and flushes.
func (c *conn) serve(args [][]byte) {
	defer c.end()
	c.serveFrom(args)
}

// end closes the connection and returns what it held.
func (c *conn) end() {
	c.nc.Close()
	c.mu.Lock()
	c.gone = true
	c.mu.Unlock()
	c.releaseHolds()
	c.release()
	c.s.buffered.Add(-c.rd.TakeCommandBytes())
	c.s.nconns.Add(-1)
	c.s.mu.Lock()
	delete(c.s.conns, c)
	c.s.mu.Unlock()
	c.s.wg.Done()
}

// log is the connection's logger.
func (c *conn) log() *slog.Logger {
	return c.s.cfg.Log.With("client", int64(c.id), "remote", c.nc.RemoteAddr().String())
}

// serveFrom is serve's loop, run first for args, a command already read
// (nil: none), and for reply bytes the socket did not take (overflow):
// the state a connection leaving its event loop is in (detach).
func (c *conn) serveFrom(args [][]byte) {
	log := c.log()
	if len(c.overflow) > 0 {
		_, err := c.nc.Write(c.overflow)
		c.overflow = nil
		if err != nil {
			log.Debug("resp: write", "err", err)
			return
		}
	}
	if args != nil {
		c.exec(args)
	}
	for !c.quit {
		if c.br.Buffered() == 0 || len(c.pending) >= maxInflight || c.overOutputLimit() {
			if err := c.drain(); err != nil {
				log.Debug("resp: write", "err", err)
				return
			}
		}
		args, err := c.rd.ReadCommand()
		if err != nil {
			var pe *ProtocolError
			var ce *CommandError
			if errors.As(err, &ce) {
				// Read whole but refused: nothing of it is held.
				c.s.buffered.Add(-c.rd.TakeCommandBytes())
				log.Debug("resp: command refused", "err", ce.Msg)
				c.replyError(ce.Msg)
				continue
			}
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
		c.held += c.rd.TakeCommandBytes()
		c.exec(args)
	}
	c.flush()
}

// releaseHolds gives back, when the connection ends, every row it still
// holds (without waiting for the replies: nobody is left to read them). A
// release the protocol refuses (the hold had already timed out) is
// harmless.
func (c *conn) releaseHolds() {
	for h := range c.holds {
		c.nextReq++
		req := &wire.Request{ID: c.nextReq, Client: c.id, Keyspace: h.keyspace, Op: wire.OpRelease, Key: h.key}
		c.s.b.Submit(req, func(*wire.Reply) {})
	}
	clear(c.holds)
}

// replySize is what a reply costs the output budgets.
func replySize(r *wire.Reply) int64 {
	n := int64(len(r.Value)) + replyOverheadBytes
	for _, t := range r.Txn {
		n += int64(len(t.Value))
	}
	return n
}

// overOutputLimit reports whether the connection should write what it owes
// before reading on: its replies are over OutputBufferLimit, or the server
// is over BufferBudget.
func (c *conn) overOutputLimit() bool {
	c.mu.Lock()
	n := c.replyBytes
	c.mu.Unlock()
	return n >= c.s.cfg.OutputBufferLimit || c.s.buffered.Load() >= c.s.cfg.BufferBudget
}

// drain writes every reply owed and flushes; then nothing read before is
// held any longer, and release returns it to the budgets.
func (c *conn) drain() error {
	err := c.flush()
	c.release()
	return err
}

// release returns to the server's budget what the connection's earlier
// commands and their replies held. Call it only when no command is running
// and none is owed a reply (after flush).
func (c *conn) release() {
	c.mu.Lock()
	n := c.held + c.replyBytes
	c.held, c.replyBytes = 0, 0
	c.mu.Unlock()
	c.s.buffered.Add(-n)
}

// releaseReplies returns to the server's budget what the replies that
// arrived since the last release held, once the command running has
// written or dropped them (a multi-key command, between slices).
func (c *conn) releaseReplies() {
	c.mu.Lock()
	n := c.replyBytes
	c.replyBytes = 0
	c.mu.Unlock()
	c.s.buffered.Add(-n)
}

// budget is the Reader's Budget: it grants n more bytes to a command that
// has cmdBytes, within QueryBufferLimit and the server's BufferBudget,
// writing what the connection owes first if that makes room.
func (c *conn) budget(cmdBytes, n int64) error {
	lim, total := c.s.cfg.QueryBufferLimit, c.s.cfg.BufferBudget
	if cmdBytes+n > lim {
		return fmt.Errorf("ERR command too large: its arguments exceed client-query-buffer-limit (%d bytes)", lim)
	}
	if (c.held+cmdBytes+n > lim || c.s.buffered.Load()+n > total) && c.fd < 0 {
		// A write error ends the connection at its next read. (On an
		// event loop the connection checked its room before reading the
		// command: see loopRoom.)
		c.drain()
	}
	if used := c.s.buffered.Add(n); used > total {
		c.s.buffered.Add(-n)
		if ok, suppressed := c.s.budgetLog.AllowN(); ok {
			c.s.cfg.Log.Warn("resp: client buffer budget exhausted; refusing commands (logged once per 10s)", "client", int64(c.id), "used", used-n, "budget", total, "suppressed", suppressed)
		}
		return fmt.Errorf("OOM command not allowed: client buffers would exceed the server's client-buffer-budget (%d bytes); retry later", total)
	}
	return nil
}

// flush writes every pending reply and flushes the connection.
func (c *conn) flush() error {
	c.awaitPending()
	c.reportHits()
	return c.w.Flush()
}

// reportHits tells the backend how many reads it answered without its
// loop since the last report (CachedReader).
func (c *conn) reportHits() {
	if c.hits > 0 {
		c.cached.CachedReadsServed(c.hitLevel, c.hits)
		c.hits = 0
	}
}

// awaitPending waits for the pending replies and writes them, in order,
// without flushing. It is the barrier before a multi-step command. It
// writes what is in hand (writeReady, as an event loop does) and sleeps
// for the reply awaited names until none is owed.
func (c *conn) awaitPending() {
	c.sendUnsent()
	for {
		c.writeReady()
		if len(c.pending) == 0 {
			return
		}
		if !c.until(c.awaited()) {
			c.pending = c.pending[:0]
			return
		}
	}
}

// wait returns the reply to request id, or false if the server closes
// first.
func (c *conn) wait(id wire.RequestID) (*wire.Reply, bool) {
	if !c.until(id) {
		return nil, false
	}
	if r := c.take(id); r != nil {
		return r, true
	}
	panic("resp: awaited reply not found") // until returned true: it is in got
}

// take removes the reply to request id from got and returns it, or nil if
// it is not there.
func (c *conn) take(id wire.RequestID) *wire.Reply {
	for i := c.gotHead; i < len(c.got); i++ {
		if r := c.got[i]; r != nil && r.ID == id {
			c.got[i] = nil
			for c.gotHead < len(c.got) && c.got[c.gotHead] == nil {
				c.gotHead++
			}
			if c.gotHead == len(c.got) {
				c.got, c.gotHead = c.got[:0], 0
			}
			return r
		}
	}
	return nil
}

// has reports whether the reply to request id is in got.
func (c *conn) has(id wire.RequestID) bool {
	for _, r := range c.got[c.gotHead:] {
		if r != nil && r.ID == id {
			return true
		}
	}
	return false
}

// collect moves the replies that arrived into got; c.mu is held.
func (c *conn) collect() {
	if len(c.arrived) > 0 {
		c.got = append(c.got, c.arrived...)
		clear(c.arrived)
		c.arrived = c.arrived[:0]
	}
}

// until sleeps until the reply to request id is in got, or returns false
// if the server closes first.
func (c *conn) until(id wire.RequestID) bool {
	for {
		if c.has(id) {
			return true
		}
		c.mu.Lock()
		if len(c.arrived) > 0 {
			c.collect()
			c.mu.Unlock()
			continue
		}
		c.waitFor = id
		c.mu.Unlock()
		select {
		case <-c.signal:
		case <-c.s.quit:
			c.quit = true
			return false
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
	c.owed.Add(1)
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

// await1 is await for a command that makes one call.
func (c *conn) await1(req *wire.Request, write func(w *Writer, reps []*wire.Reply)) {
	c.pending = append(c.pending, pending{one: c.submit(req), write: write})
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
