package sim

import (
	"fmt"

	"github.com/lightcone/lightcone/internal/wire"
)

// Codec turns messages into bytes and back; *wire.Codec is one. With
// Config.Codec set the simulator carries every message between nodes as
// its encoding, as the real runtime does: the message is encoded when it
// leaves its node and each delivery decodes a copy of its own. A codec bug
// (a field not encoded, a kind not registered) then changes what the
// receiver sees and fails the seeded run, and no two nodes ever share a
// message's memory. Tests wrap a codec to drop a field and show that the
// history checker notices.
type Codec interface {
	Append(dst []byte, m wire.Msg) ([]byte, error)
	Decode(b []byte) (wire.Msg, error)
}

// encoded is a message in flight as its encoding (Config.Codec).
type encoded struct {
	kind string        // the sent message's Kind
	t    *wire.MsgType // its type, if a *wire.Codec encoded it
	b    []byte
}

func (e *encoded) Kind() string { return e.kind }

// onWire is what send puts on the network for m, and m's size on the wire.
// Without a codec it is m itself, sized by its encoding if it has one (0 if
// not). With one it is m's encoding; an error is a bug in the protocol's
// messages or their registration and stops the run.
func (s *Sim) onWire(from, to wire.NodeID, m wire.Msg, c *kindStat) (wire.Msg, int) {
	if s.cfg.Codec == nil {
		b, err := wire.AppendMsg(s.scratch[:0], m)
		if err != nil {
			return m, 0
		}
		s.scratch = b
		return m, len(b)
	}
	// Encode straight into the free end of the frames chunk (newEncoded).
	if cap(s.frames)-len(s.frames) < frameRoom {
		s.frames = make([]byte, 0, frameChunk)
	}
	dst := s.frames[len(s.frames):len(s.frames)]
	var b []byte
	var err error
	if wc, ok := s.cfg.Codec.(*wire.Codec); ok && c.t != nil {
		// The codec's Append would only look the kind up again.
		b, err = wire.AppendMsg(dst, m)
	} else {
		b, err = s.cfg.Codec.Append(dst, m)
		if ok && err == nil {
			c.t = wc.TypeOf(m)
		}
	}
	if err != nil {
		panic(fmt.Sprintf("sim: encoding %s from n%d to n%d at t=%d (seed %d): %v", m.Kind(), from, to, s.now, s.cfg.Seed, err))
	}
	return s.newEncoded(m.Kind(), c.t, b), len(b)
}

// The frames chunks messages in flight are encoded into: frameChunk
// bytes each, a new one when less than frameRoom is left.
const (
	frameChunk = 16 << 10
	frameRoom  = 1 << 10
)

// newEncoded is a message in flight carrying b, an encoding appended to
// the free end of the frames chunk (taken there, not copied), or else a
// copy of b. The encoded values and the frames are chunks the
// simulator allocates a few at a time (two allocations per message cost
// ~5% of a quorum run with the codec); a chunk is garbage once every
// message cut from it has been delivered or dropped. Each message still
// has bytes of its own.
func (s *Sim) newEncoded(kind string, t *wire.MsgType, b []byte) *encoded {
	e := s.encSlab.New()
	e.kind, e.t = kind, t
	n := len(s.frames)
	if len(b) == 0 || len(b) > cap(s.frames)-n || &b[0] != &s.frames[n : n+1][0] {
		// Not in place (too large, or a codec that appends elsewhere):
		// copied, as b may be reused.
		if len(b) > cap(s.frames)-n {
			s.frames = make([]byte, 0, max(frameChunk, len(b)))
			n = 0
		}
		s.frames = append(s.frames, b...)
	} else {
		s.frames = s.frames[:n+len(b)]
	}
	e.b = s.frames[n:len(s.frames):len(s.frames)]
	return e
}

// delivered is the message e hands its receiver: a fresh decoding when e
// carries an encoding. A decoding error, or a decoded message of another
// kind than the one sent (a flag lost on the way), stops the run.
func (s *Sim) delivered(e *event) wire.Msg {
	enc, ok := e.msg.(*encoded)
	if !ok {
		return e.msg
	}
	var m wire.Msg
	var err error
	// A *wire.Codec decodes through the simulator's one Decoder (no
	// allocation per delivery). Only that type: a wrapper that embeds one
	// (a test's codec that drops a field) has its own Decode called.
	if c, ok := s.cfg.Codec.(*wire.Codec); ok {
		m, err = c.DecodeAs(&s.dec, enc.b, enc.t)
	} else {
		m, err = s.cfg.Codec.Decode(enc.b)
	}
	if err == nil && m.Kind() != enc.kind {
		err = fmt.Errorf("decoded as %s", m.Kind())
	}
	if err != nil {
		panic(fmt.Sprintf("sim: decoding %s from n%d at n%d at t=%d (seed %d): %v", enc.kind, e.from, e.node, s.now, s.cfg.Seed, err))
	}
	return m
}

// MustCodec is a codec for the given message types (wire.NewCodec), for
// Config.Codec. It panics if two types claim one kind: their registration
// is a bug.
func MustCodec(types ...[]wire.MsgType) *wire.Codec {
	c, err := wire.NewCodec(types...)
	if err != nil {
		panic(err)
	}
	return c
}
