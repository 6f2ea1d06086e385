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
		&UpdateAck{Op: 10, Key: "k", OK: true, Ballot: Ballot{N: 3, Node: 1}},
		&MWriteResp{Op: 11, Key: "k", Redirect: true, Retry: true, Master: Ballot{N: 2, Node: 3}},
		&MWrite{Op: 12, Key: "k", Rec: rec, Origin: 2}, &LReadResp{Op: 13, Key: "k", Retry: true},
		&Grant{Key: "k", Nonce: 14, Ballot: Ballot{N: 1, Node: 2}, Redirect: true},
		&Update{Op: 15, Key: "k", Rec: rec, Active: true, Ballot: Ballot{N: 4, Node: 0}},
		&Confirm{Key: "k", Nonce: 16, Ballot: Ballot{N: 5, Node: 1}}, &ConfirmAck{Key: "k", Nonce: 17, OK: true, Ballot: Ballot{N: 5, Node: 1}},
		&Prepare{Key: "k", Ballot: Ballot{N: 6, Node: 2}, Consent: true, Handoff: Ballot{N: 5, Node: 1}},
		&Promise{Key: "k", Ballot: Ballot{N: 6, Node: 2}, OK: true, Known: Ballot{N: 5, Node: 1}, Found: true, Rec: rec},
		&Accept{Key: "k", Ballot: Ballot{N: 6, Node: 2}, Found: true, Rec: rec},
		&Accepted{Key: "k", Ballot: Ballot{N: 6, Node: 2}, Known: Ballot{N: 7, Node: 0}},
		&Handoff{Key: "k", From: Ballot{N: 5, Node: 1}, Found: true, Rec: rec, Holders: []HolderLease{{Node: 2, Remaining: 1e9}, {Node: 0, Remaining: 5}}},
		&HandoffDone{Key: "k", OK: true, Ballot: Ballot{N: 6, Node: 2}},
		&Migrate{Op: 18, Key: "k", Region: 3}, &MigrateResp{Op: 19, Key: "k", Err: "busy", Retry: true, Redirect: true, Master: Ballot{N: 1, Node: 1}},
		&MWrite{Op: 20, Key: "k", Rec: rec, Inc: 3}, &MWriteResp{Op: 21, Key: "k", Stale: true, Inc: 4},
		&MWrite{Op: 24, Key: "k", Rec: rec, Cond: true, Expected: rec.Version}, &MWriteResp{Op: 25, Key: "k", Conflict: true, Version: rec.Version},
		&Migrate{Op: 22, Key: "k", Inc: 5}, &MigrateResp{Op: 23, Key: "k", Stale: true, Inc: 6}, &Hello{Inc: 7},
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
