package grpcapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/lightcone/lightcone/internal/api"
	"github.com/lightcone/lightcone/internal/api/grpcapi/lightconev1"
	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/wire"
)

// Defaults for Config's zero fields. The size limits match the RESP front
// end's, so a value written through one is readable through the other.
const (
	DefaultKeyspace      = "default"
	DefaultMaxKeyBytes   = 64 << 10 // as Cassandra's partition key limit
	DefaultMaxValueBytes = 64 << 20
	DefaultMaxBatchKeys  = 1024
)

// msgOverheadBytes is what a request's framing and its other fields may add
// to its keys and value: the receive limit leaves this much room so that a
// request just over a key or value limit reaches the handler and gets
// InvalidArgument naming the limit rather than gRPC's ResourceExhausted.
const msgOverheadBytes = 64 << 10

// Config configures NewServer. The zero value of each field selects its
// default.
type Config struct {
	// Keyspace is the keyspace of requests that name none. Default
	// DefaultKeyspace ("default").
	Keyspace string
	// Token, if set, is the bearer token every call but the health service's
	// must carry as metadata "authorization: Bearer <token>"; calls without
	// it fail with codes.Unauthenticated. Compared in constant time. Default:
	// no authentication.
	Token string
	// MaxKeyBytes is the longest key accepted, in bytes. Default
	// DefaultMaxKeyBytes (64 KiB).
	MaxKeyBytes int
	// MaxValueBytes is the longest value accepted, in bytes. Default
	// DefaultMaxValueBytes (64 MiB).
	MaxValueBytes int
	// MaxBatchKeys is the most keys one BatchGet may read. Default
	// DefaultMaxBatchKeys (1024).
	MaxBatchKeys int
	// HasKeyspace, if set, reports whether the node serves a keyspace;
	// requests naming one it does not fail with codes.NotFound before
	// reaching the backend. Default: every keyspace is passed on, and the
	// backend decides.
	HasKeyspace func(name string) bool
	// Status answers the Status call; it must be safe for concurrent use.
	// Default: Status fails with codes.Unimplemented.
	Status func() *lightconev1.StatusResponse
	// Log receives authentication failures and internal errors. Default:
	// discard.
	Log *slog.Logger
}

// EnsureDefaults fills in the zero fields of c.
func (c *Config) EnsureDefaults() {
	if c.Keyspace == "" {
		c.Keyspace = DefaultKeyspace
	}
	if c.MaxKeyBytes <= 0 {
		c.MaxKeyBytes = DefaultMaxKeyBytes
	}
	if c.MaxValueBytes <= 0 {
		c.MaxValueBytes = DefaultMaxValueBytes
	}
	if c.MaxBatchKeys <= 0 {
		c.MaxBatchKeys = DefaultMaxBatchKeys
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// maxRecvMsgBytes is the largest request message the server reads: room for
// the largest Put or BatchGet cfg allows, plus framing.
func (c *Config) maxRecvMsgBytes() int {
	put := c.MaxKeyBytes + c.MaxValueBytes
	batch := c.MaxBatchKeys * (c.MaxKeyBytes + 8) // 8: a key's tag and length
	return max(put, batch) + msgOverheadBytes
}

// NewServer returns a gRPC server that serves the KV service over b, the
// standard health service (grpc.health.v1, SERVING for "" and
// "lightcone.v1.KV") and server reflection. opts are applied after the
// server's own options, so they may override its receive size limit; their
// interceptors run after the authentication check. The caller serves it
// (Serve) and stops it (GracefulStop or Stop).
func NewServer(cfg Config, b api.Backend, opts ...grpc.ServerOption) *grpc.Server {
	cfg.EnsureDefaults()
	kv := &service{cfg: cfg, b: b, client: b.NewClientID()}
	kv.cached, _ = b.(api.CachedReader)
	var own []grpc.ServerOption
	own = append(own, grpc.MaxRecvMsgSize(cfg.maxRecvMsgBytes()), grpc.NumStreamWorkers(streamWorkers))
	if cfg.Token != "" {
		a := &auth{want: sha256.Sum256([]byte(cfg.Token)), log: cfg.Log}
		own = append(own,
			grpc.ChainUnaryInterceptor(a.unary),
			grpc.ChainStreamInterceptor(a.stream))
	}
	s := grpc.NewServer(append(own, opts...)...)
	lightconev1.RegisterKVServer(s, kv)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(lightconev1.KV_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, hs)
	reflection.Register(s)
	return s
}

// auth checks bearer tokens. Only the hash of the expected token is kept,
// so comparing takes the same time whatever the presented token's length.
type auth struct {
	want [sha256.Size]byte
	log  *slog.Logger
}

// healthPrefix names the methods served without a token: load balancers
// and orchestrators probe health without credentials.
const healthPrefix = "/grpc.health.v1.Health/"

func (a *auth) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := a.check(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (a *auth) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := a.check(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return h(srv, ss)
}

func (a *auth) check(ctx context.Context, method string) error {
	if strings.HasPrefix(method, healthPrefix) {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) == 0 {
		a.log.Debug("grpcapi: call without token", "method", method)
		return status.Error(codes.Unauthenticated, "missing authorization metadata (want \"Bearer <token>\")")
	}
	scheme, token, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		a.log.Debug("grpcapi: call with a non-bearer authorization", "method", method)
		return status.Error(codes.Unauthenticated, "authorization is not \"Bearer <token>\"")
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(token)))
	if subtle.ConstantTimeCompare(got[:], a.want[:]) != 1 {
		a.log.Debug("grpcapi: call with a wrong token", "method", method)
		return status.Error(codes.Unauthenticated, "invalid bearer token")
	}
	return nil
}

// service implements lightconev1.KVServer over a Backend. All its calls
// share one ClientID; request IDs come from an atomic counter, so they are
// unique among the server's outstanding requests.
type service struct {
	lightconev1.UnimplementedKVServer
	cfg    Config
	b      api.Backend
	client wire.ClientID
	nextID atomic.Uint64
	cached api.CachedReader // b, if it answers some reads without its loop
}

func (s *service) Get(ctx context.Context, in *lightconev1.GetRequest) (*lightconev1.GetResponse, error) {
	ks, lvl, err := s.common(in.GetKeyspace(), in.GetConsistency())
	if err != nil {
		return nil, err
	}
	if err := s.checkKey(in.GetKey()); err != nil {
		return nil, err
	}
	if s.cached != nil && in.GetSession() == 0 {
		// A call has nothing of its own in flight that it must follow
		// (concurrent calls are unordered): a reply the protocol
		// published answers it without the node's loop.
		if r, ok := s.cached.CachedRead(ks, in.GetKey(), lvl); ok {
			s.cached.CachedReadsServed(lvl, 1)
			return getResponse(r), nil
		}
	}
	r, err := s.do(ctx, &wire.Request{Client: wire.ClientID(in.GetSession()), Keyspace: ks, Op: wire.OpGet, Key: string(in.GetKey()), Level: lvl})
	if err != nil {
		return nil, err
	}
	return getResponse(r), nil
}

func (s *service) Put(ctx context.Context, in *lightconev1.PutRequest) (*lightconev1.PutResponse, error) {
	ks, lvl, err := s.common(in.GetKeyspace(), in.GetConsistency())
	if err != nil {
		return nil, err
	}
	if err := s.checkKey(in.GetKey()); err != nil {
		return nil, err
	}
	if n := len(in.GetValue()); n > s.cfg.MaxValueBytes {
		return nil, status.Errorf(codes.InvalidArgument, "value too large (%d bytes; max %d)", n, s.cfg.MaxValueBytes)
	}
	// A nil Value would read back as found-but-nil from some backends; an
	// empty value is still a value.
	v := in.GetValue()
	if v == nil {
		v = []byte{}
	}
	req := &wire.Request{Client: wire.ClientID(in.GetSession()), Keyspace: ks, Op: wire.OpPut, Key: string(in.GetKey()), Value: v, Level: lvl, Update: updateMode(in.GetUpdate())}
	condition(req, in.GetExpectedVersion())
	r, err := s.do(ctx, req)
	if err != nil {
		return nil, err
	}
	return &lightconev1.PutResponse{Version: versionPB(r.Version)}, nil
}

func (s *service) Delete(ctx context.Context, in *lightconev1.DeleteRequest) (*lightconev1.DeleteResponse, error) {
	ks, lvl, err := s.common(in.GetKeyspace(), in.GetConsistency())
	if err != nil {
		return nil, err
	}
	if err := s.checkKey(in.GetKey()); err != nil {
		return nil, err
	}
	req := &wire.Request{Client: wire.ClientID(in.GetSession()), Keyspace: ks, Op: wire.OpDelete, Key: string(in.GetKey()), Level: lvl, Update: updateMode(in.GetUpdate())}
	condition(req, in.GetExpectedVersion())
	r, err := s.do(ctx, req)
	if err != nil {
		return nil, err
	}
	return &lightconev1.DeleteResponse{Version: versionPB(r.Version)}, nil
}

// BatchGet submits one get per key, all at once, and waits for every reply
// (or the call's end).
func (s *service) BatchGet(ctx context.Context, in *lightconev1.BatchGetRequest) (*lightconev1.BatchGetResponse, error) {
	ks, lvl, err := s.common(in.GetKeyspace(), in.GetConsistency())
	if err != nil {
		return nil, err
	}
	keys := in.GetKeys()
	if len(keys) > s.cfg.MaxBatchKeys {
		return nil, status.Errorf(codes.InvalidArgument, "too many keys (%d; max %d)", len(keys), s.cfg.MaxBatchKeys)
	}
	for i, k := range keys {
		if err := s.checkKey(k); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "keys[%d]: %s", i, status.Convert(err).Message())
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxError(err, wire.OpGet)
	}
	type result struct {
		i int
		r *wire.Reply
	}
	// The channel holds every reply, so no done call ever blocks, even
	// after this call has returned.
	ch := make(chan result, len(keys))
	ids := make([]wire.RequestID, len(keys))
	for i, k := range keys {
		req := &wire.Request{Keyspace: ks, Op: wire.OpGet, Key: string(k), Level: lvl}
		s.stamp(req)
		ids[i] = req.ID
		s.b.Submit(req, func(r *wire.Reply) { ch <- result{i, r} })
	}
	replies := make([]*wire.Reply, len(keys))
	for range keys {
		select {
		case res := <-ch:
			replies[res.i] = res.r
		case <-ctx.Done():
			return nil, ctxError(ctx.Err(), wire.OpGet)
		}
	}
	out := &lightconev1.BatchGetResponse{Results: make([]*lightconev1.GetResponse, len(keys))}
	for i, r := range replies {
		if err := s.check(&wire.Request{Op: wire.OpGet, ID: ids[i], Client: s.client}, r); err != nil {
			if len(keys) > 1 {
				st := status.Convert(err)
				return nil, status.Errorf(st.Code(), "keys[%d]: %s", i, st.Message())
			}
			return nil, err
		}
		out.Results[i] = getResponse(r)
	}
	return out, nil
}

// Migrate moves a key's write mastership (wire.OpMigrate): the region goes
// in the request's value, and the reply's value is the new master's region.
func (s *service) Migrate(ctx context.Context, in *lightconev1.MigrateRequest) (*lightconev1.MigrateResponse, error) {
	ks, _, err := s.common(in.GetKeyspace(), lightconev1.Consistency_CONSISTENCY_DEFAULT)
	if err != nil {
		return nil, err
	}
	if err := s.checkKey(in.GetKey()); err != nil {
		return nil, err
	}
	if in.GetRegion() == "" {
		return nil, status.Error(codes.InvalidArgument, "region is required")
	}
	r, err := s.do(ctx, &wire.Request{Keyspace: ks, Op: wire.OpMigrate, Key: string(in.GetKey()), Value: []byte(in.GetRegion())})
	if err != nil {
		return nil, err
	}
	return &lightconev1.MigrateResponse{Region: string(r.Value)}, nil
}

// Acquire takes a hold on a key (wire.OpAcquire) for a session: the one the
// request names, or a new client ID of the backend's.
func (s *service) Acquire(ctx context.Context, in *lightconev1.AcquireRequest) (*lightconev1.AcquireResponse, error) {
	ks, _, err := s.common(in.GetKeyspace(), lightconev1.Consistency_CONSISTENCY_DEFAULT)
	if err != nil {
		return nil, err
	}
	if err := s.checkKey(in.GetKey()); err != nil {
		return nil, err
	}
	session := wire.ClientID(in.GetSession())
	if session == 0 {
		session = s.b.NewClientID()
	}
	if _, err := s.do(ctx, &wire.Request{Client: session, Keyspace: ks, Op: wire.OpAcquire, Key: string(in.GetKey())}); err != nil {
		return nil, err
	}
	return &lightconev1.AcquireResponse{Session: uint64(session)}, nil
}

// Release gives back a session's hold on a key (wire.OpRelease).
func (s *service) Release(ctx context.Context, in *lightconev1.ReleaseRequest) (*lightconev1.ReleaseResponse, error) {
	ks, _, err := s.common(in.GetKeyspace(), lightconev1.Consistency_CONSISTENCY_DEFAULT)
	if err != nil {
		return nil, err
	}
	if err := s.checkKey(in.GetKey()); err != nil {
		return nil, err
	}
	if in.GetSession() == 0 {
		return nil, status.Error(codes.InvalidArgument, "session is required: the one Acquire returned")
	}
	if _, err := s.do(ctx, &wire.Request{Client: wire.ClientID(in.GetSession()), Keyspace: ks, Op: wire.OpRelease, Key: string(in.GetKey())}); err != nil {
		return nil, err
	}
	return &lightconev1.ReleaseResponse{}, nil
}

func (s *service) Status(ctx context.Context, _ *lightconev1.StatusRequest) (*lightconev1.StatusResponse, error) {
	if s.cfg.Status == nil {
		return nil, status.Error(codes.Unimplemented, "status is not configured on this server")
	}
	st := s.cfg.Status()
	if st == nil {
		st = &lightconev1.StatusResponse{}
	}
	return st, nil
}

// common resolves and checks what every request carries: its keyspace and
// its consistency level.
func (s *service) common(keyspace string, c lightconev1.Consistency) (string, wire.Level, error) {
	if keyspace == "" {
		keyspace = s.cfg.Keyspace
	}
	if s.cfg.HasKeyspace != nil && !s.cfg.HasKeyspace(keyspace) {
		return "", 0, status.Errorf(codes.NotFound, "unknown keyspace %q", keyspace)
	}
	lvl, err := Level(c)
	if err != nil {
		return "", 0, status.Error(codes.InvalidArgument, err.Error())
	}
	return keyspace, lvl, nil
}

func (s *service) checkKey(k []byte) error {
	if len(k) > s.cfg.MaxKeyBytes {
		return status.Errorf(codes.InvalidArgument, "key too large (%d bytes; max %d)", len(k), s.cfg.MaxKeyBytes)
	}
	return nil
}

// stamp gives req a fresh request ID and, unless it names a session, the
// server's client ID.
func (s *service) stamp(req *wire.Request) {
	if req.Client == 0 {
		req.Client = s.client
	}
	req.ID = wire.RequestID(s.nextID.Add(1))
}

// do submits req and waits for its reply or the end of ctx. If ctx ends
// first, the backend's later done call lands in the buffered channel,
// which nobody reads: it neither blocks nor panics.
func (s *service) do(ctx context.Context, req *wire.Request) (*wire.Reply, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError(err, req.Op)
	}
	s.stamp(req)
	ch := make(chan *wire.Reply, 1)
	s.b.Submit(req, func(r *wire.Reply) {
		select {
		case ch <- r:
		default: // a second call breaks Backend's contract; never block the loop for it
		}
	})
	select {
	case r := <-ch:
		if err := s.check(req, r); err != nil {
			return nil, err
		}
		return r, nil
	case <-ctx.Done():
		return nil, ctxError(ctx.Err(), req.Op)
	}
}

// check turns a reply into the call's error, nil on success.
func (s *service) check(req *wire.Request, r *wire.Reply) error {
	op, id := req.Op, req.ID
	switch {
	case r == nil:
		s.cfg.Log.Error("grpcapi: backend replied nil", "op", op, "id", id)
		return status.Error(codes.Internal, "backend replied nothing")
	case r.ID != id || r.Client != req.Client:
		s.cfg.Log.Error("grpcapi: backend replied to another request",
			"op", op, "id", id, "reply_id", r.ID, "reply_client", r.Client)
		return status.Error(codes.Internal, "backend replied to another request")
	case r.Err != nil && r.Err.Code == wire.ErrConflict:
		// The current version rides along, so the client can retry
		// without another read of the version.
		st := status.Newf(codes.Aborted, "%s not applied, the condition failed (current version %v): %s", op, r.Version, r.Err.Msg)
		if d, err := st.WithDetails(versionPB(r.Version)); err == nil {
			st = d
		}
		return st.Err()
	case r.Err != nil:
		return replyError(op, r.Err)
	}
	return nil
}

// condition makes req conditional on expected, if the call set it
// (PutRequest.expected_version).
func condition(req *wire.Request, expected *lightconev1.Version) {
	if expected != nil {
		req.Cond = true
		req.Expected = wire.Version{TS: hlc.Timestamp{WallNanos: expected.GetWallNanos(), Logical: expected.GetLogical()}, Node: wire.NodeID(expected.GetNode())}
	}
}

// replyError maps a backend error to a gRPC status by its class, which
// tells the client whether the operation may have taken effect.
func replyError(op wire.Op, e *wire.Error) error {
	switch e.Code {
	case wire.ErrTimeout:
		return status.Errorf(codes.DeadlineExceeded, "%s timed out, outcome unknown (a write may or may not have taken effect): %s", op, e.Msg)
	case wire.ErrUnavailable:
		return status.Errorf(codes.Unavailable, "%s unavailable, not applied: %s", op, e.Msg)
	case wire.ErrInvalid:
		return status.Errorf(codes.InvalidArgument, "%s invalid: %s", op, e.Msg)
	case wire.ErrNoSpace:
		return status.Errorf(codes.ResourceExhausted, "%s refused, not applied: %s", op, e.Msg)
	}
	return status.Errorf(codes.Internal, "%s failed: %s", op, e)
}

// ctxError is the status of a call that ended before its reply arrived.
func ctxError(err error, op wire.Op) error {
	code := status.FromContextError(err).Code()
	what := "canceled"
	if code == codes.DeadlineExceeded {
		what = "deadline exceeded"
	}
	if op == wire.OpGet {
		return status.Errorf(code, "%s %s before the reply", op, what)
	}
	return status.Errorf(code, "%s %s before the reply, outcome unknown (it may or may not take effect)", op, what)
}

// Level returns the wire level of a Consistency; the two enumerations
// match value for value.
func Level(c lightconev1.Consistency) (wire.Level, error) {
	if c < 0 || int(c) > int(wire.All) {
		return 0, fmt.Errorf("grpcapi: unknown consistency %d", int32(c))
	}
	return wire.Level(c), nil
}

// Consistency returns the Consistency of a wire level.
func Consistency(l wire.Level) lightconev1.Consistency {
	return lightconev1.Consistency(l)
}

func getResponse(r *wire.Reply) *lightconev1.GetResponse {
	g := &lightconev1.GetResponse{Found: r.Found, Version: versionPB(r.Version)}
	if r.Found {
		g.Value = r.Value
	}
	return g
}

func versionPB(v wire.Version) *lightconev1.Version {
	return &lightconev1.Version{WallNanos: v.TS.WallNanos, Logical: v.TS.Logical, Node: int32(v.Node)}
}

// updateMode maps the API's update mode onto the wire's (unknown values,
// from a newer client, mean the keyspace default).
func updateMode(m lightconev1.UpdateMode) wire.UpdateMode {
	switch m {
	case lightconev1.UpdateMode_UPDATE_MODE_ACTIVE:
		return wire.UpdateActive
	case lightconev1.UpdateMode_UPDATE_MODE_PASSIVE:
		return wire.UpdatePassive
	}
	return wire.UpdateDefault
}

// Txn runs a transaction (wire.OpTxn): its shape and sizes are checked
// before anything is submitted, and the keyspace's protocol runs it or
// refuses it.
func (s *service) Txn(ctx context.Context, in *lightconev1.TxnRequest) (*lightconev1.TxnResponse, error) {
	ks, _, err := s.common(in.GetKeyspace(), lightconev1.Consistency_CONSISTENCY_DEFAULT)
	if err != nil {
		return nil, err
	}
	txn := &wire.Txn{ReadOnly: in.GetReadOnly()}
	if n := len(in.GetOps()); n > wire.MaxTxnOps {
		return nil, status.Errorf(codes.InvalidArgument, "transaction has %d operations (at most %d)", n, wire.MaxTxnOps)
	}
	for i, op := range in.GetOps() {
		if err := s.checkKey(op.GetKey()); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "ops[%d]: %s", i, status.Convert(err).Message())
		}
		if n := len(op.GetValue()); n > s.cfg.MaxValueBytes {
			return nil, status.Errorf(codes.InvalidArgument, "ops[%d]: value too large (%d bytes; max %d)", i, n, s.cfg.MaxValueBytes)
		}
		w := wire.TxnOp{Key: string(op.GetKey()), Delta: op.GetDelta(), Delete: op.GetDelete()}
		switch op.GetKind() {
		case lightconev1.TxnOp_KIND_READ:
			w.Kind = wire.TxnRead
		case lightconev1.TxnOp_KIND_WRITE:
			w.Kind, w.Value = wire.TxnWrite, op.GetValue()
			if w.Value == nil && !w.Delete {
				w.Value = []byte{} // an empty value is a value
			}
		case lightconev1.TxnOp_KIND_ADD:
			w.Kind = wire.TxnAdd
		default:
			return nil, status.Errorf(codes.InvalidArgument, "ops[%d]: kind %s; want KIND_READ, KIND_WRITE or KIND_ADD", i, op.GetKind())
		}
		txn.Ops = append(txn.Ops, w)
	}
	if err := txn.Check(); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	r, err := s.do(ctx, &wire.Request{Keyspace: ks, Op: wire.OpTxn, Txn: txn})
	if err != nil {
		return nil, err
	}
	if len(r.Txn) != len(txn.Ops) {
		s.cfg.Log.Error("grpcapi: backend answered a transaction with the wrong number of results", "results", len(r.Txn), "ops", len(txn.Ops))
		return nil, status.Errorf(codes.Internal, "backend answered %d results for %d operations", len(r.Txn), len(txn.Ops))
	}
	out := &lightconev1.TxnResponse{Version: versionPB(r.Version), Results: make([]*lightconev1.TxnResult, len(r.Txn))}
	for i, res := range r.Txn {
		out.Results[i] = &lightconev1.TxnResult{Found: res.Found, Value: res.Value, Version: versionPB(res.Version)}
	}
	return out, nil
}

// streamWorkers is how many goroutines the server keeps to run calls
// (grpc.NumStreamWorkers). Without them gRPC starts a goroutine per call,
// whose stack then grows (runtime.newstack, copystack: 9% of the server's
// CPU under putload's durable puts); a worker keeps its grown stack. A
// call that finds every worker busy still gets a goroutine of its own.
const streamWorkers = 256
