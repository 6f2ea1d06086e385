package sim

import (
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/wire"
)

// note is an encodable test message.
type note struct {
	N    uint64
	Text string
}

func (*note) Kind() string { return "test.note" }
func (m *note) AppendPayload(b []byte) []byte {
	return wire.AppendString(wire.AppendUvarint(b, m.N), m.Text)
}
func (m *note) DecodePayload(d *wire.Decoder) { m.N, m.Text = d.Uvarint(), d.String() }
func noteTypes() []wire.MsgType {
	return []wire.MsgType{{Kind: "test.note", New: func() wire.Encodable { return new(note) }}}
}
func (r *relay) Start(env.Env)                             {}
func (r *relay) Timer(env.Env, any)                        {}
func (r *relay) Step(_ env.Env, _ wire.NodeID, m wire.Msg) { *r.got = append(*r.got, m.(*note)) }

// relay sends one note (the same pointer) to every node, itself included,
// per request, and records the notes it receives.
type relay struct {
	got  *[]*note
	sent *[]*note
}

func (r *relay) Request(e env.Env, req *wire.Request) {
	m := &note{N: uint64(req.ID), Text: req.Key}
	*r.sent = append(*r.sent, m)
	for _, n := range e.Topology().Nodes {
		e.Send(n.ID, m)
	}
}

func runRelay(t *testing.T, c Codec, net NetConfig) (s *Sim, sent, got []*note) {
	t.Helper()
	keys := make([]string, 20)
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
	}
	return runRelayKeys(t, c, net, keys)
}

// runRelayKeys runs a relay request per key (its note's Text).
func runRelayKeys(t *testing.T, c Codec, net NetConfig, keys []string) (s *Sim, sent, got []*note) {
	t.Helper()
	s = New(Config{Seed: 5, Topology: testWorld(t), Log: slog.New(slog.DiscardHandler), Net: net, Codec: c,
		Factory: func(wire.NodeID) env.Replica { return &relay{got: &got, sent: &sent} }})
	for i, k := range keys {
		s.Submit(0, wire.NodeID(i%2), &wire.Request{ID: wire.RequestID(i + 1), Client: 1, Key: k})
	}
	s.Run(1e9)
	return s, sent, got
}

// reusingCodec encodes every message into one buffer of its own, which it
// returns and overwrites at the next call.
type reusingCodec struct {
	*wire.Codec
	buf *[]byte
}

func (c reusingCodec) Append(_ []byte, m wire.Msg) ([]byte, error) {
	b, err := c.Codec.Append((*c.buf)[:0], m)
	*c.buf = b
	return b, err
}

// TestCodecFramesHoldEveryMessage: messages in flight are encoded into
// shared chunks; small and large ones (past a chunk's free room, past a
// whole chunk), and those of a codec that returns a buffer it reuses,
// each arrive as sent.
func TestCodecFramesHoldEveryMessage(t *testing.T) {
	var keys []string
	for i := range 200 {
		keys = append(keys, strings.Repeat(string(rune('a'+i%26)), []int{3, 700, frameRoom + 5, 3000, frameChunk + 100}[i%5]))
	}
	for _, tc := range []struct {
		name string
		c    Codec
	}{{"codec", MustCodec(noteTypes())}, {"reusing", reusingCodec{MustCodec(noteTypes()), new([]byte)}}} {
		name := tc.name
		_, sent, got := runRelayKeys(t, tc.c, NetConfig{Reorder: 0.5}, keys)
		if len(got) != 2*len(keys) {
			t.Fatalf("%s: %d delivered; want %d", name, len(got), 2*len(keys))
		}
		byN := map[uint64]*note{}
		for _, m := range sent {
			byN[m.N] = m
		}
		for _, m := range got {
			if !reflect.DeepEqual(m, byN[m.N]) {
				t.Fatalf("%s: delivered note %d with a %d-byte text; sent %d bytes", name, m.N, len(m.Text), len(byN[m.N].Text))
			}
		}
	}
}

// TestCodecGivesEachDeliveryItsOwnCopy: with a codec, every delivery (to
// another node, to the sender itself, and each copy of a duplicated
// message) is a fresh message equal to the one sent; without, the receivers
// share the sender's pointer.
func TestCodecGivesEachDeliveryItsOwnCopy(t *testing.T) {
	_, sent, got := runRelay(t, MustCodec(noteTypes()), NetConfig{Duplicate: 1})
	if len(sent) != 20 || len(got) != 80 {
		t.Fatalf("%d sent, %d delivered; want 20 and 80 (2 nodes, every message duplicated)", len(sent), len(got))
	}
	seen := map[*note]bool{}
	byN := map[uint64]*note{}
	for _, m := range sent {
		seen[m] = true
		byN[m.N] = m
	}
	for _, m := range got {
		if seen[m] {
			t.Fatalf("delivery of note %d shares a pointer with another delivery or the sender", m.N)
		}
		seen[m] = true
		if !reflect.DeepEqual(m, byN[m.N]) {
			t.Fatalf("delivered %+v; sent %+v", m, byN[m.N])
		}
	}
	_, sent, got = runRelay(t, nil, NetConfig{})
	if got[0] != sent[0] && got[0] != sent[1] {
		t.Fatal("without a codec a delivery is a new pointer; want the sender's (the fast path)")
	}
}

// TestCodecKeepsTraceAndCounts: the codec changes nothing a run does: the
// same seed takes the same steps with and without it and counts the same
// bytes.
func TestCodecKeepsTraceAndCounts(t *testing.T) {
	net := NetConfig{Loss: 0.1, Duplicate: 0.2, Reorder: 0.3}
	with, _, _ := runRelay(t, MustCodec(noteTypes()), net)
	without, _, _ := runRelay(t, nil, net)
	if with.TraceHash() != without.TraceHash() || with.Steps() != without.Steps() {
		t.Errorf("with the codec: %d steps, trace %x; without: %d steps, trace %x", with.Steps(), with.TraceHash(), without.Steps(), without.TraceHash())
	}
	if w, wo := with.MessageCounts(), without.MessageCounts(); !reflect.DeepEqual(w, wo) || len(w) != 1 || w[0].Bytes == 0 {
		t.Errorf("MessageCounts with the codec %v; without %v; want equal, with bytes", w, wo)
	}
}

// droppingCodec decodes notes without their Text.
type droppingCodec struct{ *wire.Codec }

func (c droppingCodec) Decode(b []byte) (wire.Msg, error) {
	m, err := c.Codec.Decode(b)
	if n, ok := m.(*note); ok {
		n.Text = ""
	}
	return m, err
}

// TestCodecBugStopsRun: a message the codec cannot encode stops the run
// with its kind and seed; a dropped field reaches the receiver as lost.
func TestCodecBugStopsRun(t *testing.T) {
	empty, err := wire.NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			msg := fmt.Sprint(recover())
			if !strings.Contains(msg, "test.note") || !strings.Contains(msg, "seed 5") {
				t.Errorf("panic %q; want one naming the kind and the seed", msg)
			}
		}()
		runRelay(t, empty, NetConfig{})
	}()
	_, _, got := runRelay(t, droppingCodec{MustCodec(noteTypes())}, NetConfig{})
	if len(got) == 0 || got[0].Text != "" {
		t.Fatalf("through a codec that drops Text, got %+v", got)
	}
}
