package svchost_test

import (
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
# HELP lightcone_storage_requests_total Storage-service requests executed, by the service's region and operation (storagesvc operations; an S3 backend makes one or two S3 requests for each, as the price catalogue's ops say).
# TYPE lightcone_storage_requests_total counter
lightcone_storage_requests_total{op="get",region="a"} 2
lightcone_storage_requests_total{op="put",region="a"} 1
lightcone_storage_requests_total{op="put_meta",region="a"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "lightcone_storage_requests_total"); err != nil {
		t.Error(err)
	}
}
