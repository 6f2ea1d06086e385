package lease

import (
	"reflect"
	"testing"

	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

func TestMessagesRoundTrip(t *testing.T) {
	c, err := wire.NewCodec(MessageTypes())
	if err != nil {
		t.Fatal(err)
	}
	rec := store.Record{Value: []byte("v"), Version: wire.Version{TS: hlc.Timestamp{WallNanos: 7, Logical: 1}, Node: 2}}
	for _, m := range []wire.Msg{
		&LRead{Op: 1, Key: "k"}, &LReadResp{Op: 2, Key: "k", Found: true, Rec: rec},
		&MWrite{Op: 3, Key: "k", Rec: rec, Passive: true}, &MWriteResp{Op: 4, Key: "k", Version: rec.Version, Failed: true},
		&Renew{Key: "k", Nonce: 5}, &Grant{Key: "k", Nonce: 6, Found: true, Rec: rec}, &GrantAck{Key: "k", Nonce: 7},
		&Update{Op: 8, Key: "k", Rec: rec, Active: true}, &Update{Op: 9, Key: "k", Rec: store.Record{Tombstone: true}},
		&UpdateAck{Op: 10, Key: "k"},
	} {
		b, err := c.Append(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Decode(b)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip of %#v = %#v, %v", m, got, err)
		}
	}
}
