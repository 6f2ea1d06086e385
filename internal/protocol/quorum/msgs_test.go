package quorum

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
	rec := store.Record{Value: []byte("v"), Version: wire.Version{TS: hlc.Timestamp{WallNanos: 1e18, Logical: 3}, Node: 7}}
	for _, m := range []wire.Msg{
		&Mutate{Op: 1 << 62, Key: "k", Rec: rec},
		&Mutate{Op: 2, Key: "k", Rec: store.Record{Tombstone: true}, Repair: true},
		&MutateAck{Op: 3, Key: "k"},
		&Mutate{Op: 4, Key: "k", Rec: rec, Cond: true, Expected: rec.Version},
		&MutateAck{Op: 5, Key: "k", Conflict: true, Version: rec.Version},
		&Read{Op: 4, Key: ""},
		&ReadResp{Op: 5, Key: "k", Found: true, Rec: rec},
		&ReadResp{Op: 6, Key: "k"},
		&Clock{Wall: 1e18 + 12345},
		&Clock{Wall: -1},
	} {
		b, err := c.Append(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Decode(b)
		if err != nil {
			t.Fatalf("Decode(%s): %v", m.Kind(), err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("round trip of %#v = %#v", m, got)
		}
		if _, err := c.Decode(b[:len(b)-1]); err == nil {
			t.Errorf("Decode(truncated %s) = nil error", m.Kind())
		}
	}
}

func FuzzDecode(f *testing.F) {
	c, err := wire.NewCodec(MessageTypes())
	if err != nil {
		f.Fatal(err)
	}
	b, _ := c.Append(nil, &ReadResp{Op: 5, Key: "k", Found: true, Rec: store.Record{Value: []byte("v")}})
	f.Add(b)
	b, _ = c.Append(nil, &Mutate{Op: 1, Key: "k", Repair: true})
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := c.Decode(b)
		if err != nil {
			return
		}
		again, err := c.Append(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := c.Decode(again)
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("re-decoding differs: %#v vs %#v (%v)", m, m2, err)
		}
	})
}
