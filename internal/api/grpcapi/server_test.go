package grpcapi

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/lightcone/lightcone/internal/api"
	pb "github.com/lightcone/lightcone/internal/api/grpcapi/lightconev1"
	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/wire"
)

// testTimeout bounds every call a test makes, so a hang fails rather than
// stalls the test binary.
const testTimeout = 10 * time.Second

// startServer starts a server over b on a loopback listener and returns
// its address; the server stops when the test ends.
func startServer(t *testing.T, cfg Config, b api.Backend) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	s := NewServer(cfg, b)
	served := make(chan error, 1)
	go func() { served <- s.Serve(lis) }()
	t.Cleanup(func() {
		s.Stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return lis.Addr().String()
}

// dial returns a client connection to addr, closed when the test ends.
func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		t.Fatalf("grpc.NewClient(%s): %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// serve starts a server over b and returns a client connection to it.
func serve(t *testing.T, cfg Config, b *fakeBackend) *grpc.ClientConn {
	t.Helper()
	return dial(t, startServer(t, cfg, b))
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func wireVersion(v *pb.Version) wire.Version {
	return wire.Version{TS: hlc.Timestamp{WallNanos: v.GetWallNanos(), Logical: v.GetLogical()}, Node: wire.NodeID(v.GetNode())}
}

func wantCode(t *testing.T, what string, err error, want codes.Code) *status.Status {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != want {
		t.Fatalf("%s: code %v (%v); want %v", what, st.Code(), err, want)
	}
	return st
}

func TestPutGetDeleteRoundTrip(t *testing.T) {
	b := newFakeBackend(t)
	kv := pb.NewKVClient(serve(t, Config{}, b))
	ctx := ctxT(t)

	g, err := kv.Get(ctx, &pb.GetRequest{Key: []byte("k")})
	if err != nil {
		t.Fatalf("Get(k) before any write: %v", err)
	}
	if g.Found || g.Value != nil || !wireVersion(g.Version).IsZero() {
		t.Fatalf("Get(k) before any write = %v; want not found, zero version", g)
	}

	var last wire.Version
	for i, v := range []string{"v1", "v2", ""} {
		p, err := kv.Put(ctx, &pb.PutRequest{Key: []byte("k"), Value: []byte(v)})
		if err != nil {
			t.Fatalf("Put(k, %q): %v", v, err)
		}
		pv := wireVersion(p.Version)
		if !last.Less(pv) {
			t.Fatalf("Put #%d version %v; want after %v", i, pv, last)
		}
		last = pv
		g, err := kv.Get(ctx, &pb.GetRequest{Key: []byte("k")})
		if err != nil {
			t.Fatalf("Get(k): %v", err)
		}
		if !g.Found || string(g.Value) != v || wireVersion(g.Version) != pv {
			t.Fatalf("Get(k) = found=%v %q @%v; want %q @%v", g.Found, g.Value, wireVersion(g.Version), v, pv)
		}
	}

	d, err := kv.Delete(ctx, &pb.DeleteRequest{Key: []byte("k")})
	if err != nil {
		t.Fatalf("Delete(k): %v", err)
	}
	if dv := wireVersion(d.Version); !last.Less(dv) {
		t.Fatalf("Delete version %v; want after %v", dv, last)
	}
	g, err = kv.Get(ctx, &pb.GetRequest{Key: []byte("k")})
	if err != nil {
		t.Fatalf("Get(k) after delete: %v", err)
	}
	if g.Found || len(g.Value) != 0 || wireVersion(g.Version) != wireVersion(d.Version) {
		t.Fatalf("Get(k) after delete = %v; want not found at the delete's version", g)
	}

	// The default keyspace is "default"; another keyspace is separate.
	if _, err := kv.Put(ctx, &pb.PutRequest{Keyspace: "other", Key: []byte("k"), Value: []byte("o")}); err != nil {
		t.Fatalf("Put(other/k): %v", err)
	}
	b.mu.Lock()
	_, inDefault := b.data["default/k"]
	_, inOther := b.data["other/k"]
	b.mu.Unlock()
	if !inDefault || !inOther {
		t.Fatalf("backend keys: default/k %v, other/k %v; want both", inDefault, inOther)
	}
}

func TestBatchGet(t *testing.T) {
	b := newFakeBackend(t)
	kv := pb.NewKVClient(serve(t, Config{}, b))
	ctx := ctxT(t)
	for _, k := range []string{"a", "c"} {
		if _, err := kv.Put(ctx, &pb.PutRequest{Key: []byte(k), Value: []byte("v" + k)}); err != nil {
			t.Fatalf("Put(%s): %v", k, err)
		}
	}
	r, err := kv.BatchGet(ctx, &pb.BatchGetRequest{Keys: [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("a")}})
	if err != nil {
		t.Fatalf("BatchGet: %v", err)
	}
	var got []string
	for _, g := range r.Results {
		got = append(got, fmt.Sprintf("%v:%s", g.Found, g.Value))
	}
	if want := "true:va false: true:vc true:va"; strings.Join(got, " ") != want {
		t.Fatalf("BatchGet(a b c a) = %q; want %q", strings.Join(got, " "), want)
	}

	r, err = kv.BatchGet(ctx, &pb.BatchGetRequest{})
	if err != nil || len(r.Results) != 0 {
		t.Fatalf("BatchGet() = %v, %v; want no results", r, err)
	}

	b.setErr("b", &wire.Error{Code: wire.ErrUnavailable, Msg: "no replicas"})
	_, err = kv.BatchGet(ctx, &pb.BatchGetRequest{Keys: [][]byte{[]byte("a"), []byte("b")}})
	st := wantCode(t, "BatchGet with a failing key", err, codes.Unavailable)
	if !strings.Contains(st.Message(), "keys[1]") {
		t.Errorf("BatchGet error %q; want it to name keys[1]", st.Message())
	}
}

func TestConsistencyMapping(t *testing.T) {
	// The enumerations match value for value and name for name.
	if len(pb.Consistency_name) != len(wire.Levels())+1 {
		t.Fatalf("Consistency has %d values; wire has %d levels", len(pb.Consistency_name), len(wire.Levels())+1)
	}
	for _, l := range append([]wire.Level{wire.LevelDefault}, wire.Levels()...) {
		c := Consistency(l)
		if want := "CONSISTENCY_" + l.String(); c.String() != want {
			t.Errorf("Consistency(%v) = %v; want %v", l, c, want)
		}
		if got, err := Level(c); err != nil || got != l {
			t.Errorf("Level(%v) = %v, %v; want %v", c, got, err, l)
		}
	}

	b := newFakeBackend(t)
	kv := pb.NewKVClient(serve(t, Config{}, b))
	ctx := ctxT(t)
	for n, name := range pb.Consistency_name {
		c := pb.Consistency(n)
		want := wire.Level(n)
		if _, err := kv.Put(ctx, &pb.PutRequest{Key: []byte("k"), Value: []byte("v"), Consistency: c}); err != nil {
			t.Fatalf("Put at %s: %v", name, err)
		}
		if got := b.lastLevel(); got != want {
			t.Errorf("Put at %s reached the backend at %v; want %v", name, got, want)
		}
		if _, err := kv.Get(ctx, &pb.GetRequest{Key: []byte("k"), Consistency: c}); err != nil {
			t.Fatalf("Get at %s: %v", name, err)
		}
		if got := b.lastLevel(); got != want {
			t.Errorf("Get at %s reached the backend at %v; want %v", name, got, want)
		}
		if _, err := kv.Delete(ctx, &pb.DeleteRequest{Key: []byte("k"), Consistency: c}); err != nil {
			t.Fatalf("Delete at %s: %v", name, err)
		}
		if got := b.lastLevel(); got != want {
			t.Errorf("Delete at %s reached the backend at %v; want %v", name, got, want)
		}
		if _, err := kv.BatchGet(ctx, &pb.BatchGetRequest{Keys: [][]byte{[]byte("k")}, Consistency: c}); err != nil {
			t.Fatalf("BatchGet at %s: %v", name, err)
		}
		if got := b.lastLevel(); got != want {
			t.Errorf("BatchGet at %s reached the backend at %v; want %v", name, got, want)
		}
	}
	_, err := kv.Get(ctx, &pb.GetRequest{Key: []byte("k"), Consistency: 99})
	wantCode(t, "Get at consistency 99", err, codes.InvalidArgument)
}

func TestErrorMapping(t *testing.T) {
	b := newFakeBackend(t)
	b.setErr("timeout", &wire.Error{Code: wire.ErrTimeout, Msg: "2 of 3 acks"})
	b.setErr("unavailable", &wire.Error{Code: wire.ErrUnavailable, Msg: "no master"})
	b.setErr("invalid", &wire.Error{Code: wire.ErrInvalid, Msg: "level ALL not allowed"})
	b.setErr("weird", &wire.Error{Code: 200, Msg: "?"})
	kv := pb.NewKVClient(serve(t, Config{
		HasKeyspace: func(ks string) bool { return ks == "default" || ks == "other" },
	}, b))
	ctx := ctxT(t)

	tests := []struct {
		key, keyspace string
		code          codes.Code
		msg           string // a substring of the status message
	}{
		{key: "timeout", code: codes.DeadlineExceeded, msg: "outcome unknown"},
		{key: "unavailable", code: codes.Unavailable, msg: "no master"},
		{key: "invalid", code: codes.InvalidArgument, msg: "level ALL not allowed"},
		{key: "weird", code: codes.Internal, msg: "?"},
		{key: "k", keyspace: "nope", code: codes.NotFound, msg: `unknown keyspace "nope"`},
		{key: "k", keyspace: "other", code: codes.OK},
	}
	for _, tt := range tests {
		calls := map[string]func() error{
			"Get": func() error {
				_, err := kv.Get(ctx, &pb.GetRequest{Keyspace: tt.keyspace, Key: []byte(tt.key)})
				return err
			},
			"Put": func() error {
				_, err := kv.Put(ctx, &pb.PutRequest{Keyspace: tt.keyspace, Key: []byte(tt.key), Value: []byte("v")})
				return err
			},
			"Delete": func() error {
				_, err := kv.Delete(ctx, &pb.DeleteRequest{Keyspace: tt.keyspace, Key: []byte(tt.key)})
				return err
			},
			"BatchGet": func() error {
				_, err := kv.BatchGet(ctx, &pb.BatchGetRequest{Keyspace: tt.keyspace, Keys: [][]byte{[]byte(tt.key)}})
				return err
			},
		}
		for name, call := range calls {
			what := fmt.Sprintf("%s(%s/%s)", name, tt.keyspace, tt.key)
			st := wantCode(t, what, call(), tt.code)
			if !strings.Contains(st.Message(), tt.msg) {
				t.Errorf("%s: message %q; want it to contain %q", what, st.Message(), tt.msg)
			}
		}
	}
}

func TestStatus(t *testing.T) {
	b := newFakeBackend(t)
	kv := pb.NewKVClient(serve(t, Config{}, b))
	_, err := kv.Status(ctxT(t), &pb.StatusRequest{})
	wantCode(t, "Status without Config.Status", err, codes.Unimplemented)

	want := &pb.StatusResponse{
		Node: "n1", Region: "eu", Protocol: "quorum", Version: "v0.1.0",
		Keyspaces: []*pb.KeyspaceStatus{{Name: "default", Policy: "quorum rf=3"}},
	}
	kv = pb.NewKVClient(serve(t, Config{Status: func() *pb.StatusResponse { return want }}, b))
	got, err := kv.Status(ctxT(t), &pb.StatusRequest{})
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if got.Node != "n1" || got.Region != "eu" || got.Protocol != "quorum" || got.Version != "v0.1.0" ||
		len(got.Keyspaces) != 1 || got.Keyspaces[0].Name != "default" || got.Keyspaces[0].Policy != "quorum rf=3" {
		t.Fatalf("Status() = %v; want %v", got, want)
	}
}

func TestTokenAuth(t *testing.T) {
	b := newFakeBackend(t)
	conn := serve(t, Config{Token: "s3cret"}, b)
	kv := pb.NewKVClient(conn)

	tests := []struct {
		name string
		md   []string // authorization values
		code codes.Code
	}{
		{"missing", nil, codes.Unauthenticated},
		{"empty", []string{""}, codes.Unauthenticated},
		{"wrong", []string{"Bearer s3creT"}, codes.Unauthenticated},
		{"prefix", []string{"Bearer s3cre"}, codes.Unauthenticated},
		{"longer", []string{"Bearer s3crets3cret"}, codes.Unauthenticated},
		{"basic", []string{"Basic s3cret"}, codes.Unauthenticated},
		{"bare", []string{"s3cret"}, codes.Unauthenticated},
		{"right", []string{"Bearer s3cret"}, codes.OK},
		{"scheme case", []string{"bearer s3cret"}, codes.OK},
	}
	for _, tt := range tests {
		ctx := ctxT(t)
		for _, v := range tt.md {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", v)
		}
		_, err := kv.Put(ctx, &pb.PutRequest{Key: []byte("k"), Value: []byte("v")})
		wantCode(t, "Put with "+tt.name+" token", err, tt.code)
		_, err = kv.Status(ctx, &pb.StatusRequest{})
		want := tt.code
		if want == codes.OK {
			want = codes.Unimplemented // authenticated, but Config.Status is unset
		}
		wantCode(t, "Status with "+tt.name+" token", err, want)

		// Reflection, a streaming service, is guarded as well.
		rc, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
		if err == nil {
			// Send fails with io.EOF once the server has ended the stream;
			// Recv then returns the stream's status.
			_ = rc.Send(&reflectionpb.ServerReflectionRequest{
				MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}})
			_, err = rc.Recv()
		}
		wantCode(t, "reflection with "+tt.name+" token", err, tt.code)
	}
	b.mu.Lock()
	n := len(b.levels)
	b.mu.Unlock()
	if n != 2 {
		t.Errorf("backend received %d requests; want 2 (only the authenticated ones)", n)
	}

	// Health is served without a token, for load balancers.
	h, err := healthpb.NewHealthClient(conn).Check(ctxT(t), &healthpb.HealthCheckRequest{})
	if err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health Check without token = %v, %v; want SERVING", h, err)
	}
}

func TestHealthAndReflection(t *testing.T) {
	conn := serve(t, Config{}, newFakeBackend(t))
	ctx := ctxT(t)
	for _, svc := range []string{"", "lightcone.v1.KV"} {
		h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health Check(%q) = %v, %v; want SERVING", svc, h, err)
		}
	}
	rc, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatalf("ServerReflectionInfo: %v", err)
	}
	if err := rc.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatalf("reflection Send: %v", err)
	}
	r, err := rc.Recv()
	if err != nil {
		t.Fatalf("reflection Recv: %v", err)
	}
	var names []string
	for _, s := range r.GetListServicesResponse().GetService() {
		names = append(names, s.Name)
	}
	got := strings.Join(names, " ")
	for _, want := range []string{"lightcone.v1.KV", "grpc.health.v1.Health"} {
		if !strings.Contains(got, want) {
			t.Errorf("reflection services %q; want %s among them", got, want)
		}
	}
}

func TestSizeLimits(t *testing.T) {
	b := newFakeBackend(t)
	kv := pb.NewKVClient(serve(t, Config{MaxKeyBytes: 16, MaxValueBytes: 32, MaxBatchKeys: 3}, b))
	ctx := ctxT(t)
	key16, key17 := bytes.Repeat([]byte("k"), 16), bytes.Repeat([]byte("k"), 17)
	val32, val33 := bytes.Repeat([]byte("v"), 32), bytes.Repeat([]byte("v"), 33)

	if _, err := kv.Put(ctx, &pb.PutRequest{Key: key16, Value: val32}); err != nil {
		t.Fatalf("Put at both limits: %v", err)
	}
	_, err := kv.Put(ctx, &pb.PutRequest{Key: key17, Value: val32})
	st := wantCode(t, "Put with a long key", err, codes.InvalidArgument)
	if want := "key too large (17 bytes; max 16)"; st.Message() != want {
		t.Errorf("Put with a long key: %q; want %q", st.Message(), want)
	}
	_, err = kv.Put(ctx, &pb.PutRequest{Key: key16, Value: val33})
	st = wantCode(t, "Put with a long value", err, codes.InvalidArgument)
	if want := "value too large (33 bytes; max 32)"; st.Message() != want {
		t.Errorf("Put with a long value: %q; want %q", st.Message(), want)
	}
	_, err = kv.Get(ctx, &pb.GetRequest{Key: key17})
	wantCode(t, "Get with a long key", err, codes.InvalidArgument)
	_, err = kv.Delete(ctx, &pb.DeleteRequest{Key: key17})
	wantCode(t, "Delete with a long key", err, codes.InvalidArgument)
	_, err = kv.BatchGet(ctx, &pb.BatchGetRequest{Keys: [][]byte{key16, key17}})
	wantCode(t, "BatchGet with a long key", err, codes.InvalidArgument)
	_, err = kv.BatchGet(ctx, &pb.BatchGetRequest{Keys: [][]byte{key16, key16, key16, key16}})
	wantCode(t, "BatchGet of 4 keys (max 3)", err, codes.InvalidArgument)

	b.mu.Lock()
	n := len(b.levels)
	b.mu.Unlock()
	if n != 1 {
		t.Errorf("backend received %d requests; want 1 (refusals are checked before submission)", n)
	}
}

// TestDefaultLimitsAcceptLargeValues checks that the server's gRPC receive
// limit (4 MiB by default) does not undercut MaxValueBytes.
func TestDefaultLimitsAcceptLargeValues(t *testing.T) {
	kv := pb.NewKVClient(serve(t, Config{}, newFakeBackend(t)))
	ctx := ctxT(t)
	big := bytes.Repeat([]byte("x"), 8<<20)
	if _, err := kv.Put(ctx, &pb.PutRequest{Key: []byte("big"), Value: big}); err != nil {
		t.Fatalf("Put of 8 MiB: %v", err)
	}
	g, err := kv.Get(ctx, &pb.GetRequest{Key: []byte("big")})
	if err != nil || !bytes.Equal(g.Value, big) {
		t.Fatalf("Get(big) = %d bytes, %v; want 8 MiB", len(g.GetValue()), err)
	}
	_, err = kv.Put(ctx, &pb.PutRequest{Key: []byte("big"), Value: make([]byte, DefaultMaxValueBytes+1)})
	wantCode(t, "Put of 64 MiB + 1", err, codes.InvalidArgument)
}

// TestDeadlineBeforeReply: a call whose deadline passes while the backend
// holds its request fails with DeadlineExceeded; the backend's late done
// call then neither blocks nor panics.
func TestDeadlineBeforeReply(t *testing.T) {
	b := newFakeBackend(t)
	kv := pb.NewKVClient(serve(t, Config{}, b))
	release := b.holdKey("slow")
	for _, op := range []string{"Get", "Put", "Delete", "BatchGet"} {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		var err error
		switch op {
		case "Get":
			_, err = kv.Get(ctx, &pb.GetRequest{Key: []byte("slow")})
		case "Put":
			_, err = kv.Put(ctx, &pb.PutRequest{Key: []byte("slow"), Value: []byte("v")})
		case "Delete":
			_, err = kv.Delete(ctx, &pb.DeleteRequest{Key: []byte("slow")})
		case "BatchGet":
			_, err = kv.BatchGet(ctx, &pb.BatchGetRequest{Keys: [][]byte{[]byte("slow"), []byte("fast")}})
		}
		cancel()
		wantCode(t, op+" past its deadline", err, codes.DeadlineExceeded)
	}
	before := b.fired.Load()
	close(release)
	deadline := time.Now().Add(testTimeout)
	for b.fired.Load() < before+4 {
		if time.Now().After(deadline) {
			t.Fatalf("late done calls: %d of 4 returned", b.fired.Load()-before)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestCancelBeforeReply calls the service directly, so that the status is
// the server's (over the network, a client's cancellation is reported by
// the client library itself).
func TestCancelBeforeReply(t *testing.T) {
	b := newFakeBackend(t)
	b.received = make(chan string, 16)
	release := b.holdKey("slow")
	cfg := Config{}
	cfg.EnsureDefaults()
	s := &service{cfg: cfg, b: b, client: b.NewClientID()}

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.Put(ctx, &pb.PutRequest{Key: []byte("slow"), Value: []byte("v")})
		errc <- err
	}()
	<-b.received
	cancel()
	st := wantCode(t, "Put cancelled while pending", <-errc, codes.Canceled)
	if !strings.Contains(st.Message(), "outcome unknown") {
		t.Errorf("Put cancelled while pending: %q; want it to say the outcome is unknown", st.Message())
	}
	close(release)

	// A call whose context has already ended is not submitted.
	_, err := s.Get(ctx, &pb.GetRequest{Key: []byte("k")})
	wantCode(t, "Get with a cancelled context", err, codes.Canceled)
	dctx, dcancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer dcancel()
	_, err = s.BatchGet(dctx, &pb.BatchGetRequest{Keys: [][]byte{[]byte("k")}})
	wantCode(t, "BatchGet past its deadline", err, codes.DeadlineExceeded)
	b.mu.Lock()
	n := len(b.levels)
	b.mu.Unlock()
	if n != 1 {
		t.Errorf("backend received %d requests; want 1", n)
	}
}

func TestConcurrentClients(t *testing.T) {
	b := newFakeBackend(t)
	addr := startServer(t, Config{Token: "t"}, b)

	const clients, ops = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Go(func() {
			// One connection per client, so the calls share no transport.
			conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			kv := pb.NewKVClient(conn)
			ctx := metadata.AppendToOutgoingContext(ctxT(t), "authorization", "Bearer t")
			for i := range ops {
				key := []byte(fmt.Sprintf("c%d/k%d", c, i%5))
				val := []byte(fmt.Sprintf("v%d", i))
				p, err := kv.Put(ctx, &pb.PutRequest{Key: key, Value: val})
				if err != nil {
					errs <- fmt.Errorf("client %d Put(%s): %w", c, key, err)
					return
				}
				g, err := kv.Get(ctx, &pb.GetRequest{Key: key})
				if err != nil {
					errs <- fmt.Errorf("client %d Get(%s): %w", c, key, err)
					return
				}
				if !g.Found || !bytes.Equal(g.Value, val) || wireVersion(g.Version) != wireVersion(p.Version) {
					errs <- fmt.Errorf("client %d Get(%s) = %q @%v; want %q @%v", c, key, g.Value, wireVersion(g.Version), val, wireVersion(p.Version))
					return
				}
				if _, err := kv.BatchGet(ctx, &pb.BatchGetRequest{Keys: [][]byte{key, key}}); err != nil {
					errs <- fmt.Errorf("client %d BatchGet(%s): %w", c, key, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.clientIDs) != 1 {
		t.Errorf("backend saw %d client IDs; want 1 per server", len(b.clientIDs))
	}
	if want := clients * ops * 4; len(b.levels) != want {
		t.Errorf("backend received %d requests; want %d", len(b.levels), want)
	}
}

func TestCtxErrorWording(t *testing.T) {
	st := status.Convert(ctxError(context.DeadlineExceeded, wire.OpGet))
	if st.Code() != codes.DeadlineExceeded || strings.Contains(st.Message(), "outcome") {
		t.Errorf("ctxError(deadline, get) = %v; want DeadlineExceeded without an outcome warning", st)
	}
	st = status.Convert(ctxError(fmt.Errorf("wrapped: %w", context.Canceled), wire.OpDelete))
	if st.Code() != codes.Canceled || !strings.Contains(st.Message(), "outcome unknown") {
		t.Errorf("ctxError(canceled, delete) = %v; want Canceled, outcome unknown", st)
	}
}

// TestMigrate: Migrate sends one OpMigrate with the region as its value in
// the named keyspace, returns the backend's region, and maps its errors as
// the other calls do.
func TestMigrate(t *testing.T) {
	b := newFakeBackend(t)
	b.setErr("busy", &wire.Error{Code: wire.ErrUnavailable, Msg: "lease: key busy"})
	b.setErr("quorum", &wire.Error{Code: wire.ErrInvalid, Msg: "quorum: unknown operation migrate"})
	kv := pb.NewKVClient(serve(t, Config{HasKeyspace: func(ks string) bool { return ks == "default" || ks == "glob" }}, b))
	ctx := ctxT(t)
	got, err := kv.Migrate(ctx, &pb.MigrateRequest{Keyspace: "glob", Key: []byte("k"), Region: "eu"})
	if err != nil || got.GetRegion() != "moved-to-eu" {
		t.Fatalf("Migrate(glob/k, eu) = %v, %v; want region moved-to-eu", got, err)
	}
	for _, tt := range []struct {
		in   *pb.MigrateRequest
		code codes.Code
		msg  string
	}{
		{&pb.MigrateRequest{Key: []byte("busy"), Region: "eu"}, codes.Unavailable, "key busy"},
		{&pb.MigrateRequest{Key: []byte("quorum"), Region: "eu"}, codes.InvalidArgument, "unknown operation migrate"},
		{&pb.MigrateRequest{Key: []byte("k")}, codes.InvalidArgument, "region is required"},
		{&pb.MigrateRequest{Keyspace: "nope", Key: []byte("k"), Region: "eu"}, codes.NotFound, `unknown keyspace "nope"`},
	} {
		_, err := kv.Migrate(ctx, tt.in)
		st := wantCode(t, fmt.Sprintf("Migrate(%v)", tt.in), err, tt.code)
		if !strings.Contains(st.Message(), tt.msg) {
			t.Errorf("Migrate(%v): message %q; want it to contain %q", tt.in, st.Message(), tt.msg)
		}
	}
}

// TestUpdateModeReachesTheBackend: a write's update mode (GlobLease's
// active or passive update) travels with the request.
func TestUpdateModeReachesTheBackend(t *testing.T) {
	b := newFakeBackend(t)
	kv := pb.NewKVClient(serve(t, Config{}, b))
	ctx := ctxT(t)
	for m, want := range map[pb.UpdateMode]wire.UpdateMode{
		pb.UpdateMode_UPDATE_MODE_DEFAULT: wire.UpdateDefault,
		pb.UpdateMode_UPDATE_MODE_ACTIVE:  wire.UpdateActive,
		pb.UpdateMode_UPDATE_MODE_PASSIVE: wire.UpdatePassive,
	} {
		if _, err := kv.Put(ctx, &pb.PutRequest{Key: []byte("k"), Value: []byte("v"), Update: m}); err != nil {
			t.Fatalf("Put %v: %v", m, err)
		}
		if got := b.lastUpdate(); got != want {
			t.Errorf("Put %v reached the backend as %v; want %v", m, got, want)
		}
		if _, err := kv.Delete(ctx, &pb.DeleteRequest{Key: []byte("k"), Update: m}); err != nil {
			t.Fatalf("Delete %v: %v", m, err)
		}
		if got := b.lastUpdate(); got != want {
			t.Errorf("Delete %v reached the backend as %v; want %v", m, got, want)
		}
	}
}

// TestConditionalWrites: expected_version makes Put and Delete conditional
// (a zero Version: the key is absent or deleted); a failed condition is
// ABORTED with the current Version as the status's detail, and an unset
// expected_version is an ordinary write.
func TestConditionalWrites(t *testing.T) {
	b := newFakeBackend(t)
	kv := pb.NewKVClient(serve(t, Config{}, b))
	ctx := ctxT(t)
	put := func(expected *pb.Version) (*pb.PutResponse, error) {
		return kv.Put(ctx, &pb.PutRequest{Key: []byte("k"), Value: []byte("v"), ExpectedVersion: expected})
	}
	first, err := put(&pb.Version{})
	if err != nil {
		t.Fatalf("Put expecting absent, to an absent key: %v", err)
	}
	_, err = put(&pb.Version{})
	st := wantCode(t, "Put expecting absent, to a present key", err, codes.Aborted)
	if d := st.Details(); len(d) != 1 || wireVersion(d[0].(*pb.Version)) != wireVersion(first.GetVersion()) {
		t.Errorf("conflict details = %v; want the current version %v", d, first.GetVersion())
	}
	second, err := put(first.GetVersion())
	if err != nil {
		t.Fatalf("Put expecting the current version: %v", err)
	}
	if _, err := kv.Delete(ctx, &pb.DeleteRequest{Key: []byte("k"), ExpectedVersion: first.GetVersion()}); err == nil {
		t.Fatal("Delete expecting an old version: no error; want ABORTED")
	} else {
		wantCode(t, "Delete expecting an old version", err, codes.Aborted)
	}
	if _, err := kv.Delete(ctx, &pb.DeleteRequest{Key: []byte("k"), ExpectedVersion: second.GetVersion()}); err != nil {
		t.Fatalf("Delete expecting the current version: %v", err)
	}
	if _, err := put(&pb.Version{}); err != nil {
		t.Fatalf("Put expecting absent, to a deleted key: %v", err)
	}
	if _, err := put(nil); err != nil {
		t.Fatalf("unconditional Put: %v", err)
	}
}

// publishingBackend is the fake backend with replies published for some
// keys (api.CachedReader), set by the test.
type publishingBackend struct {
	*fakeBackend
	pub    map[string]*wire.Reply // keyspace + "/" + key
	served atomic.Int64
}

func (p *publishingBackend) CachedRead(ks string, key []byte, _ wire.Level) (*wire.Reply, bool) {
	r, ok := p.pub[ks+"/"+string(key)]
	return r, ok
}

func (p *publishingBackend) CachedReadsServed(_ wire.Level, n int) { p.served.Add(int64(n)) }

// TestGetAnsweredFromPublishedReply: a Get of a key whose reply the
// backend published is answered with it, without a request to the
// backend; a Get naming a session, or of another key, goes to the backend.
func TestGetAnsweredFromPublishedReply(t *testing.T) {
	b := newFakeBackend(t)
	pub := &publishingBackend{fakeBackend: b, pub: map[string]*wire.Reply{
		"default/p": {Found: true, Value: []byte("published"), Version: wire.Version{TS: hlc.Timestamp{WallNanos: 42}, Node: 1}},
	}}
	kv := pb.NewKVClient(dial(t, startServer(t, Config{}, pub)))
	ctx := ctxT(t)
	got, err := kv.Get(ctx, &pb.GetRequest{Key: []byte("p")})
	if err != nil || !got.Found || string(got.Value) != "published" || got.Version.GetWallNanos() != 42 {
		t.Fatalf("Get(p) = %v, %v; want the published reply", got, err)
	}
	if n := b.requests(); n != 0 || pub.served.Load() != 1 {
		t.Errorf("%d requests reached the backend and %d reads were counted served; want 0 and 1", n, pub.served.Load())
	}
	if _, err := kv.Get(ctx, &pb.GetRequest{Key: []byte("q")}); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, &pb.GetRequest{Key: []byte("p"), Session: 5}); err != nil {
		t.Fatal(err)
	}
	if n := b.requests(); n != 2 {
		t.Errorf("%d requests reached the backend; want 2 (another key, and a Get naming a session)", n)
	}
}
