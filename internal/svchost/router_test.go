package svchost_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/keyspace"
	"github.com/lightcone/lightcone/internal/node"
	"github.com/lightcone/lightcone/internal/s3svc"
	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/svchost"
	"github.com/lightcone/lightcone/internal/svctest"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// world: regions a (2 nodes) and b; a's service writes take 30 ms.
func world(t *testing.T) *topo.Topology {
	w, err := topo.Parse([]byte(`
name: r
nodes_per_region: 2
regions: [{name: a}, {name: b}]
links: [{from: a, to: b, one_way_ms: 10}]
storage_services: [{region: a, write: {median_ms: 30}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	return topo.NewTopology(w)
}

type delivery struct {
	from wire.NodeID
	msg  wire.Msg
}

// cluster builds one router per node, joined by a fake transport that
// carries Calls and Returns as their encodings, as the peer transport
// does.
func cluster(t *testing.T, tp *topo.Topology, backends map[string]svchost.Backend) ([]*svchost.Router, []chan delivery) {
	codec, err := wire.NewCodec(svchost.MessageTypes())
	if err != nil {
		t.Fatal(err)
	}
	routers := make([]*svchost.Router, len(tp.Nodes))
	inbox := make([]chan delivery, len(tp.Nodes))
	for i := range tp.Nodes {
		inbox[i] = make(chan delivery, 16)
		self := wire.NodeID(i)
		r, err := svchost.New(svchost.Config{Self: self, Topology: tp, Backends: backends,
			Deliver: func(from wire.NodeID, m wire.Msg) { inbox[self] <- delivery{from, m} },
			Send: func(to wire.NodeID, m wire.Msg) {
				b, err := codec.Append(nil, m)
				if err != nil {
					t.Errorf("encoding %s: %v", m.Kind(), err)
					return
				}
				dm, err := codec.Decode(b)
				if err != nil {
					t.Errorf("decoding %s: %v", m.Kind(), err)
					return
				}
				go routers[to].HandlePeer(self, dm)
			}})
		if err != nil {
			t.Fatal(err)
		}
		routers[i] = r
	}
	return routers, inbox
}

func recv(t *testing.T, ch chan delivery) delivery {
	t.Helper()
	select {
	case d := <-ch:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no answer from the storage service in 10s")
		return delivery{}
	}
}

// answer unwraps a delivered envelope and checks where it came from.
func answer(t *testing.T, d delivery, region int) *storagesvc.Response {
	t.Helper()
	env, ok := d.msg.(*keyspace.Envelope)
	if !ok || env.KS != 2 || d.from != storagesvc.Addr(region) {
		t.Fatalf("delivered %#v from %d; want an envelope for keyspace 2 from region %d's service", d.msg, d.from, region)
	}
	return env.Msg.(*storagesvc.Response)
}

// TestHostedForwarding: a node that does not host its region's service
// reaches it through the hosting node, and sees what the host's own
// requests wrote; the modelled write time is applied; the answer comes
// back in the keyspace's envelope.
func TestHostedForwarding(t *testing.T) {
	tp := world(t)
	routers, inbox := cluster(t, tp, nil)
	put := &keyspace.Envelope{KS: 2, Msg: &storagesvc.Request{ID: 1, Op: storagesvc.OpPut, Key: "k", Data: []byte("v"), Cond: storagesvc.Cond{IfNoneMatch: true}}}
	start := time.Now()
	routers[1].Send(storagesvc.Addr(0), put) // node 1 (a-1) -> host node 0 (a-0)
	r := answer(t, recv(t, inbox[1]), 0)
	if r.Code != storagesvc.OK || r.ID != 1 || r.ETag == "" {
		t.Fatalf("forwarded put = %+v; want OK with an ETag", r)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("forwarded put answered in %v; want at least the modelled 30 ms", d)
	}
	routers[0].Send(storagesvc.Addr(0), &keyspace.Envelope{KS: 2, Msg: &storagesvc.Request{ID: 2, Op: storagesvc.OpGet, Key: "k"}})
	if r := answer(t, recv(t, inbox[0]), 0); r.Code != storagesvc.OK || string(r.Data) != "v" {
		t.Fatalf("host's own get = %+v; want v", r)
	}
	// Region b's service is hosted by node 2, another node again.
	routers[0].Send(storagesvc.Addr(1), &keyspace.Envelope{KS: 2, Msg: &storagesvc.Request{ID: 3, Op: storagesvc.OpGet, Key: "k"}})
	if r := answer(t, recv(t, inbox[0]), 1); r.Code != storagesvc.NotFound {
		t.Fatalf("get from region b's service = %+v; want not found (services are per region)", r)
	}
}

// replica sends one request to region 0's service when it starts and
// records the answer.
type replica struct{ got chan wire.Msg }

func (r *replica) Start(e env.Env) {
	e.Send(storagesvc.Addr(0), &storagesvc.Request{ID: 9, Op: storagesvc.OpPut, Key: "n", Data: []byte("x")})
}
func (r *replica) Step(e env.Env, from wire.NodeID, m wire.Msg) {
	if from == storagesvc.Addr(0) {
		r.got <- m
	}
}
func (r *replica) Request(env.Env, *wire.Request) {}
func (r *replica) Timer(env.Env, any)             {}

// TestNodeRoutesServiceMessages: a protocol on a real node reaches its
// region's service by Send and gets the answer as a message from its
// address, through the keyspace mux.
func TestNodeRoutesServiceMessages(t *testing.T) {
	tp := world(t)
	got := make(chan wire.Msg, 1)
	factory, err := keyspace.NewFactory([]keyspace.Def{{Name: "default", Factory: func(wire.NodeID) env.Replica { return &replica{got: got} }}})
	if err != nil {
		t.Fatal(err)
	}
	var nd *node.Node
	r, err := svchost.New(svchost.Config{Self: 0, Topology: tp, Deliver: func(from wire.NodeID, m wire.Msg) { nd.Deliver(from, m) }})
	if err != nil {
		t.Fatal(err)
	}
	nd, err = node.New(node.Config{ID: 0, Topology: tp, Factory: factory, Engine: store.NewMem(), Services: r})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- nd.Run(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case m := <-got:
		if resp, ok := m.(*storagesvc.Response); !ok || resp.ID != 9 || resp.Code != storagesvc.OK {
			t.Fatalf("replica got %#v; want the put's OK", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the replica got no answer from its storage service")
	}
}

// TestS3Backend: a region configured as s3 sends its requests to the
// endpoint (a MinIO server), from every node directly.
func TestS3Backend(t *testing.T) {
	endpoint := svctest.StartMinIO(t)
	cfg := s3svc.Config{Endpoint: endpoint, Bucket: "region-b", AccessKey: svctest.MinIOUser, SecretKey: svctest.MinIOPassword}
	s, err := s3svc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	tp := world(t)
	routers, inbox := cluster(t, tp, map[string]svchost.Backend{"b": {Backend: svchost.BackendS3, Config: cfg}})
	for i, r := range routers {
		r.Send(storagesvc.Addr(1), &keyspace.Envelope{KS: 2, Msg: &storagesvc.Request{ID: uint64(i), Op: storagesvc.OpPut,
			Key: fmt.Sprint("from-", i), Data: []byte("v"), Cond: storagesvc.Cond{IfNoneMatch: true}}})
		if a := answer(t, recv(t, inbox[i]), 1); a.Code != storagesvc.OK {
			t.Fatalf("node %d's put to the s3 backend = %+v", i, a)
		}
	}
	l, err := s.List(context.Background(), "from-", "", 0)
	if err != nil || len(l.Entries) != len(routers) {
		t.Fatalf("the bucket lists %+v, %v; want one object per node", l, err)
	}
}

func TestConfigErrors(t *testing.T) {
	tp := world(t)
	for _, tc := range []struct {
		b    map[string]svchost.Backend
		want string
	}{
		{map[string]svchost.Backend{"x": {}}, `"x" is not a region`},
		{map[string]svchost.Backend{"a": {Backend: "gcs"}}, `backend: "gcs"`},
		{map[string]svchost.Backend{"a": {Backend: "s3"}}, "endpoint: required"},
	} {
		_, err := svchost.New(svchost.Config{Topology: tp, Backends: tc.b})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%v) = %v; want an error containing %q", tc.b, err, tc.want)
		}
	}
}

// TestHostedReplicas: replica 1 of region a's service (wire.StorageReplica)
// is its own store on the hosting node, reached from another node by
// forwarding, answering from its own address; replica 0 does not see its
// objects.
func TestHostedReplicas(t *testing.T) {
	tp := world(t)
	routers, inbox := cluster(t, tp, nil)
	rep := wire.StorageReplica(0, 1)
	from := func(d delivery) *storagesvc.Response {
		t.Helper()
		env, ok := d.msg.(*keyspace.Envelope)
		if !ok || d.from != rep {
			t.Fatalf("delivered %#v from %d; want an envelope from replica 1 of region a (%d)", d.msg, d.from, rep)
		}
		return env.Msg.(*storagesvc.Response)
	}
	routers[1].Send(rep, &keyspace.Envelope{KS: 2, Msg: &storagesvc.Request{ID: 1, Op: storagesvc.OpPut, Key: "k", Data: []byte("v"), Cond: storagesvc.Cond{IfNoneMatch: true}}})
	if r := from(recv(t, inbox[1])); r.Code != storagesvc.OK {
		t.Fatalf("forwarded put to replica 1 = %+v", r)
	}
	routers[0].Send(rep, &keyspace.Envelope{KS: 2, Msg: &storagesvc.Request{ID: 2, Op: storagesvc.OpGet, Key: "k"}})
	if r := from(recv(t, inbox[0])); r.Code != storagesvc.OK || string(r.Data) != "v" {
		t.Fatalf("host's get from replica 1 = %+v; want v", r)
	}
	routers[0].Send(storagesvc.Addr(0), &keyspace.Envelope{KS: 2, Msg: &storagesvc.Request{ID: 3, Op: storagesvc.OpGet, Key: "k"}})
	if r := answer(t, recv(t, inbox[0]), 0); r.Code != storagesvc.NotFound {
		t.Fatalf("get from replica 0 = %+v; want not found (replicas are apart)", r)
	}
}
