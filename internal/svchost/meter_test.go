package svchost_test

import (
	"context"
	"github.com/lightcone/lightcone/internal/s3svc"
	"github.com/lightcone/lightcone/internal/svctest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lightcone/lightcone/internal/cost"
	"github.com/lightcone/lightcone/internal/keyspace"
	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/svchost"
	"github.com/lightcone/lightcone/internal/wire"
)

// TestMeter: the router reports every request it executes to its Meter,
// and the accountant's collector shows them as
// lightcone_storage_requests_total{region,op}.
func TestMeter(t *testing.T) {
	tp := world(t)
	acc := cost.NewAccountant([]string{"a", "b"})
	inbox := make(chan delivery, 16)
	r, err := svchost.New(svchost.Config{Self: 0, Topology: tp, Meter: acc,
		Deliver: func(from wire.NodeID, m wire.Msg) { inbox <- delivery{from, m} }})
	if err != nil {
		t.Fatal(err)
	}
	for i, req := range []*storagesvc.Request{
		{Op: storagesvc.OpPut, Key: "k", Data: []byte("value")},
		{Op: storagesvc.OpPutMeta, Key: "k", Meta: storagesvc.Meta{"m": "1"}},
		{Op: storagesvc.OpGet, Key: "k"},
		{Op: storagesvc.OpGet, Key: "absent"},
	} {
		req.ID = uint64(i)
		r.Send(storagesvc.Addr(0), &keyspace.Envelope{KS: 2, Msg: req})
		answer(t, recv(t, inbox), 0)
	}
	u := acc.Usage(0)
	if got := u.Requests[0]; got["put"] != 1 || got["put_meta"] != 1 || got["get"] != 2 || len(got) != 3 {
		t.Errorf("Requests[a] = %v; want put 1, put_meta 1, get 2", got)
	}
	if u.StoredBytes[0] != int64(len("value")+len("m1")) {
		t.Errorf("StoredBytes[a] = %d; want %d", u.StoredBytes[0], len("value")+len("m1"))
	}
	if u.TransferBytes[0][0] == 0 {
		t.Errorf("TransferBytes[a][a] = 0; want the requests' and answers' bytes")
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(acc.Collector())
	want := `
# HELP lightcone_storage_requests_total Storage-service requests executed, by the service's region and operation (storagesvc operations for hosted services; an S3 backend's S3 requests, as s3:<API>).
# TYPE lightcone_storage_requests_total counter
lightcone_storage_requests_total{op="get",region="a"} 2
lightcone_storage_requests_total{op="put",region="a"} 1
lightcone_storage_requests_total{op="put_meta",region="a"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "lightcone_storage_requests_total"); err != nil {
		t.Error(err)
	}
}

// TestMeterS3MatchesMinIO (issue 14: the S3 backend's request counts match
// the cost accountant's): a region served by a MinIO server; every path of
// every operation goes through the router, and the accountant's
// s3:<API> counts equal MinIO's own counters, API by API.
func TestMeterS3MatchesMinIO(t *testing.T) {
	m := svctest.StartMinIOServer(t)
	ctx := context.Background()
	cfg := s3svc.Config{Endpoint: m.Endpoint, Bucket: "metered", AccessKey: svctest.MinIOUser, SecretKey: svctest.MinIOPassword}
	setup, err := s3svc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := setup.EnsureBucket(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := m.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tp := world(t)
	acc := cost.NewAccountant([]string{"a", "b"})
	inbox := make(chan delivery, 16)
	r, err := svchost.New(svchost.Config{Self: 0, Topology: tp, Meter: acc,
		Backends: map[string]svchost.Backend{"a": {Backend: svchost.BackendS3, Config: cfg}},
		Deliver:  func(from wire.NodeID, m wire.Msg) { inbox <- delivery{from, m} }})
	if err != nil {
		t.Fatal(err)
	}
	do := func(req *storagesvc.Request) *storagesvc.Response {
		t.Helper()
		r.Send(storagesvc.Addr(0), &keyspace.Envelope{KS: 2, Msg: req})
		return answer(t, recv(t, inbox), 0)
	}
	create := storagesvc.Cond{IfNoneMatch: true}
	e1 := do(&storagesvc.Request{ID: 1, Op: storagesvc.OpPut, Key: "k", Data: []byte("v"), Cond: create}).ETag
	do(&storagesvc.Request{ID: 2, Op: storagesvc.OpPut, Key: "k", Data: []byte("w"), Cond: create}) // precondition failed
	e2 := do(&storagesvc.Request{ID: 3, Op: storagesvc.OpPutMeta, Key: "k", Meta: storagesvc.Meta{"m": "1"}, Cond: storagesvc.Cond{IfMatch: e1}}).ETag
	do(&storagesvc.Request{ID: 4, Op: storagesvc.OpHead, Key: "k"})
	do(&storagesvc.Request{ID: 5, Op: storagesvc.OpGet, Key: "k"})
	do(&storagesvc.Request{ID: 6, Op: storagesvc.OpGet, Key: "absent"})
	do(&storagesvc.Request{ID: 7, Op: storagesvc.OpDelete, Key: "k", Cond: storagesvc.Cond{IfMatch: e2}}) // a tombstone
	do(&storagesvc.Request{ID: 8, Op: storagesvc.OpPut, Key: "k", Data: []byte("x"), Cond: create})       // over it
	do(&storagesvc.Request{ID: 9, Op: storagesvc.OpList, Prefix: "k"})
	do(&storagesvc.Request{ID: 10, Op: storagesvc.OpDelete, Key: "k"})
	after, err := m.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ours := acc.Usage(0).Requests[0]
	apis := map[string]bool{}
	for op := range ours {
		api, ok := strings.CutPrefix(op, "s3:")
		if !ok {
			t.Errorf("the accountant counted %q for an s3 backend; want only s3:<API>", op)
		}
		apis[api] = true
	}
	for api := range after {
		if after[api] != before[api] {
			apis[api] = true
		}
	}
	for api := range apis {
		if got, want := ours["s3:"+api], after[api]-before[api]; got != want {
			t.Errorf("%s: the accountant counted %d, MinIO %d", api, got, want)
		}
	}
	t.Logf("accountant = MinIO: %v", ours)
	rates, err := cost.ForWorld(tp.World, cost.MustBuiltin())
	if err == nil {
		for op := range ours {
			if _, err := rates.RequestUSD(0, op); err != nil && rates.Priced(0) {
				t.Errorf("pricing %s: %v", op, err)
			}
		}
	}
}

// TestMeterDiskStoredBytes: a durable hosted service's stored bytes are
// every replica's objects (as the simulator counts them), kept across a
// restart of the store.
func TestMeterDiskStoredBytes(t *testing.T) {
	tp := world(t)
	dir := t.TempDir()
	run := func(reqs map[wire.NodeID]*storagesvc.Request) int64 {
		t.Helper()
		acc := cost.NewAccountant([]string{"a", "b"})
		inbox := make(chan delivery, 16)
		r, err := svchost.New(svchost.Config{Self: 0, Topology: tp, Meter: acc, Dir: dir,
			Deliver: func(from wire.NodeID, m wire.Msg) { inbox <- delivery{from, m} }})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for _, to := range []wire.NodeID{wire.StorageReplica(0, 0), wire.StorageReplica(0, 1)} {
			if req := reqs[to]; req != nil {
				r.Send(to, &keyspace.Envelope{KS: 2, Msg: req})
				d := recv(t, inbox)
				env, ok := d.msg.(*keyspace.Envelope)
				if !ok || d.from != to {
					t.Fatalf("delivered %#v from %d; want the answer of %d", d.msg, d.from, to)
				}
				if resp := env.Msg.(*storagesvc.Response); resp.Code != storagesvc.OK {
					t.Fatalf("%s at %d: %v", req.Op, to, resp)
				}
			}
		}
		return acc.Usage(0).StoredBytes[0]
	}
	got := run(map[wire.NodeID]*storagesvc.Request{
		wire.StorageReplica(0, 0): {ID: 1, Op: storagesvc.OpPut, Key: "k", Data: []byte("value"), Meta: storagesvc.Meta{"m": "1"}},
		wire.StorageReplica(0, 1): {ID: 2, Op: storagesvc.OpPut, Key: "k", Data: []byte("other")},
	})
	if want := int64(len("value") + len("m1") + len("other")); got != want {
		t.Errorf("StoredBytes[a] = %d; want %d (both replicas' objects)", got, want)
	}
	// Reopened: the store's objects are counted from the start.
	got = run(map[wire.NodeID]*storagesvc.Request{
		wire.StorageReplica(0, 1): {ID: 3, Op: storagesvc.OpPut, Key: "k2", Data: []byte("more")},
	})
	if want := int64(len("value") + len("m1") + len("other") + len("more")); got != want {
		t.Errorf("after reopening, StoredBytes[a] = %d; want %d", got, want)
	}
}
