package storagesvc_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/lightcone/lightcone/internal/keyspace"
	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/wire"
	"github.com/lightcone/lightcone/internal/wire/wiretest"
)

func TestMessagesRoundTrip(t *testing.T) {
	c, err := wire.NewCodec(storagesvc.MessageTypes())
	if err != nil {
		t.Fatal(err)
	}
	if err := wiretest.Check(c, storagesvc.MessageTypes(), rand.New(rand.NewPCG(1, 2)), 2000, nil); err != nil {
		t.Fatal(err)
	}
}

func TestUnwrapKeyspaceEnvelope(t *testing.T) {
	req := &storagesvc.Request{ID: 7, Op: storagesvc.OpGet, Key: "k"}
	in := &keyspace.Envelope{KS: 3, Msg: req}
	got, wrap, ok := storagesvc.Unwrap(in)
	if !ok || got != req {
		t.Fatalf("Unwrap(envelope) = %v, %v; want the request", got, ok)
	}
	out, isEnv := wrap(&storagesvc.Response{ID: 7}).(*keyspace.Envelope)
	if !isEnv || out.KS != 3 || out.Msg.(*storagesvc.Response).ID != 7 {
		t.Fatalf("wrap(response) = %#v; want an envelope for keyspace 3", out)
	}
	if _, _, ok := storagesvc.Unwrap(&storagesvc.Response{}); ok {
		t.Fatalf("Unwrap(response) found a request")
	}
}

func TestCodeOf(t *testing.T) {
	for _, c := range []storagesvc.Code{storagesvc.OK, storagesvc.NotFound, storagesvc.PreconditionFailed, storagesvc.Unavailable, storagesvc.Invalid} {
		r := &storagesvc.Response{Code: c, Msg: "detail"}
		if got := storagesvc.CodeOf(r.Err()); got != c {
			t.Errorf("CodeOf(Response{%s}.Err()) = %s", c, got)
		}
	}
	if got := storagesvc.CodeOf(errors.New("connection reset")); got != storagesvc.Unavailable {
		t.Errorf("CodeOf(a foreign error) = %s; want unavailable (outcome unknown)", got)
	}
}
