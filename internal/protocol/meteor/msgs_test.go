package meteor

import (
	"reflect"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

func TestMessagesRoundTrip(t *testing.T) {
	c, err := wire.NewCodec(MessageTypes())
	if err != nil {
		t.Fatal(err)
	}
	v := wire.Version{TS: hlc.Timestamp{WallNanos: 1234567, Logical: 3}, Node: 2}
	rec := store.Record{Value: []byte("v"), Version: v}
	msgs := []wire.Msg{
		&Write{Op: 7, Key: "k", Rec: rec},
		&WriteAck{Op: 7, Key: "k", Version: v},
		&WriteAck{Op: 7, Key: "k", Rej: true, Version: v},
		&ReadReq{Op: 9, Key: "k", ViewTs: -5},
		&ReadResp{Op: 9, Key: "k", Found: true, Rec: rec},
		&ReadResp{Op: 9, Key: "k", TooOld: true},
		&Status{Epoch: 3, Genesis: true, Now: Payload{Seq: 4, MsgTs: 99, Entries: []Entry{{"a", v}, {"b", v}}},
			Redundant: []Payload{{Seq: 3, MsgTs: 89}, {Seq: 2, MsgTs: 79, Entries: []Entry{{"c", v}}}}},
		&Pull{Key: "k"},
		&Pull{Key: "k", Want: v},
		&PullResp{Key: "k", Epoch: 3, Seq: 4, Versions: []wire.Version{v, v}, Has: true, Rec: rec},
		&PullResp{Key: "k", Epoch: 3, Seq: 4},
	}
	for _, m := range msgs {
		b, err := c.Append(nil, m)
		if err != nil {
			t.Fatalf("Append(%s): %v", m.Kind(), err)
		}
		got, err := c.Decode(b)
		if err != nil {
			t.Fatalf("Decode(%s): %v", m.Kind(), err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("Decode(Append(%#v)) = %#v", m, got)
		}
		if _, err := c.Decode(b[:len(b)-1]); err == nil {
			t.Errorf("Decode of truncated %s succeeded", m.Kind())
		}
	}
}

// TestTheta checks θt against the thesis' figures for the meteor3 world
// (§4.2.5: "around 50ms−2ms" for Europe and U.S., "75ms−2ms" for Asia).
func TestTheta(t *testing.T) {
	w, err := topo.Preset("meteor3")
	if err != nil {
		t.Fatal(err)
	}
	tp := topo.NewTopology(w)
	for _, tc := range []struct {
		mode   Mode
		write  wire.Level
		region int
		want   time.Duration
	}{
		{M2, wire.Quorum, 0, 48 * time.Millisecond}, // Europe: median of 0, 50, 105
		{M2, wire.Quorum, 1, 48 * time.Millisecond}, // U.S.: median of 50, 0, 75
		{M2, wire.Quorum, 2, 73 * time.Millisecond}, // Asia: median of 105, 75, 0
		{M2, wire.All, 2, 103 * time.Millisecond},   // maximum
		{M2, wire.One, 2, -2 * time.Millisecond},    // minimum: the local replica (+0.25 ms if another node)
		{M1, wire.Quorum, 2, 0},                     // θt = 0
	} {
		ks, err := NewKeyspace(tp, Config{Mode: tc.mode, Write: tc.write})
		if err != nil {
			t.Fatal(err)
		}
		gw := tp.ByRegion[tc.region][0]
		reps := ks.Replicas(nil, "some-key")
		srv := reps[tc.region] // one replica per region, in region order
		want := tc.want
		if tc.write == wire.One && gw != srv {
			want += w.BaseDelay(2, 2) // the intra-region hop
		}
		lat := func(p wire.NodeID) time.Duration { return tp.BaseDelay(gw, p) }
		if got := ks.Theta(lat, reps); got != want {
			t.Errorf("%s %s region %d: Theta = %s; want %s", tc.mode, tc.write, tc.region, got, want)
		}
	}
}
