package rsm_test

import (
	"math/rand/v2"
	"testing"

	"github.com/lightcone/lightcone/internal/protocol/rsm"
	"github.com/lightcone/lightcone/internal/wire"
	"github.com/lightcone/lightcone/internal/wire/wiretest"
)

// TestMsgRoundTrip: a group's message, with random contents, decodes to
// what was encoded.
func TestMsgRoundTrip(t *testing.T) {
	c, err := wire.NewCodec(rsm.MessageTypes())
	if err != nil {
		t.Fatal(err)
	}
	if err := wiretest.Check(c, rsm.MessageTypes(), rand.New(rand.NewPCG(1, 0)), 2000, nil); err != nil {
		t.Fatal(err)
	}
	if k := (&rsm.Msg{Type: 3}).Kind(); k != "rsm.app" {
		t.Errorf("Kind of a MsgApp = %q; want rsm.app", k)
	}
}

// TestSharedMessageTypes: two protocols that both embed rsm list its
// message types; a codec over both registers them once instead of failing.
func TestSharedMessageTypes(t *testing.T) {
	c, err := wire.NewCodec(rsm.MessageTypes(), rsm.MessageTypes())
	if err != nil {
		t.Fatalf("codec over rsm's types twice: %v", err)
	}
	if got, want := len(c.Kinds()), len(rsm.MessageTypes()); got != want {
		t.Errorf("%d kinds; want %d", got, want)
	}
}
