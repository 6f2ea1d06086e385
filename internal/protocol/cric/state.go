package cric

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/lightcone/lightcone/internal/storagesvc"
)

// Ballot is a CPaxos proposal number. The zero Ballot is the fast round,
// proposal #0 (§5.2.1), which any proposer may use; every other ballot
// belongs to one proposer incarnation (Node and Nonce, a random draw at
// Start, so a restarted proposer never reuses a ballot with another value).
type Ballot struct {
	Round uint64
	Node  uint32
	Nonce uint64
}

// IsFast reports whether b is the fast round.
func (b Ballot) IsFast() bool { return b == Ballot{} }

// Less orders ballots: by round, then node, then nonce.
func (b Ballot) Less(o Ballot) bool {
	if b.Round != o.Round {
		return b.Round < o.Round
	}
	if b.Node != o.Node {
		return b.Node < o.Node
	}
	return b.Nonce < o.Nonce
}

func (b Ballot) String() string {
	return strconv.FormatUint(b.Round, 36) + "." + strconv.FormatUint(uint64(b.Node), 36) + "." + strconv.FormatUint(b.Nonce, 36)
}

func parseBallot(s string) (Ballot, error) {
	p := strings.Split(s, ".")
	if len(p) != 3 {
		return Ballot{}, fmt.Errorf("cric: ballot %q", s)
	}
	var v [3]uint64
	for i := range p {
		x, err := strconv.ParseUint(p[i], 36, 64)
		if err != nil {
			return Ballot{}, fmt.Errorf("cric: ballot %q: %w", s, err)
		}
		v[i] = x
	}
	if v[1] > 1<<32-1 {
		return Ballot{}, fmt.Errorf("cric: ballot %q: node out of range", s)
	}
	return Ballot{Round: v[0], Node: uint32(v[1]), Nonce: v[2]}, nil
}

// state is one acceptor's CPaxos state for one object: the Paxos log after
// garbage collection (§5.2.3), kept in the object's metadata, while the
// object's data is the value of the last accepted version (written once, by
// the Accept that accepted it). Versions are Paxos instances: version n+1 is
// proposed only by a proposer that knows version n chosen, so an acceptor
// that has accepted version V, or promised for version PV, needs no state
// for any earlier version: it refuses them all (as if it had promised ∞).
type state struct {
	// V is the version last accepted (0: none, the object's initial
	// absent value, which counts as chosen), with its ballot, the accepted
	// value's write ID (the value's identity) and digest, whether it is a
	// delete, and the commit bit (§5.2.2: set once V is known chosen).
	V         uint64
	B         Ballot
	W         string
	Digest    string
	Tombstone bool
	Committed bool
	// PV and PB are the highest promise: ballot PB for version PV (PV ≥ V;
	// PV = V with PB = B after an accept).
	PV uint64
	PB Ballot
	// Prev is the write ID of the value chosen at version V-1, when the
	// proposer that had V accepted knew it ("" otherwise): the one piece
	// of the collected log kept (§5.2.3: collect some, not all), so a
	// write whose answers were lost can still learn whether it was chosen
	// once the next version hides it (doc.go, rule 3b).
	Prev string
}

// Metadata names.
const (
	metaState  = "cric"
	metaDigest = "cric-digest"
)

// meta encodes s as object metadata.
func (s state) meta() storagesvc.Meta {
	flags := ""
	if s.Committed {
		flags += "c"
	}
	if s.Tombstone {
		flags += "d"
	}
	return storagesvc.Meta{
		metaState:  strings.Join([]string{strconv.FormatUint(s.V, 10), s.B.String(), s.W, flags, strconv.FormatUint(s.PV, 10), s.PB.String(), s.Prev}, " "),
		metaDigest: s.Digest,
	}
}

// parseState decodes what meta wrote; an object without it (never seen in
// practice: every object is written with it) is the zero state.
func parseState(m storagesvc.Meta) (state, error) {
	raw, ok := m[metaState]
	if !ok {
		return state{}, nil
	}
	f := strings.Split(raw, " ")
	if len(f) != 6 && len(f) != 7 { // 6: written before Prev
		return state{}, fmt.Errorf("cric: state %q", raw)
	}
	var s state
	var err error
	if s.V, err = strconv.ParseUint(f[0], 10, 64); err != nil {
		return state{}, fmt.Errorf("cric: state %q: %w", raw, err)
	}
	if s.B, err = parseBallot(f[1]); err != nil {
		return state{}, err
	}
	s.W = f[2]
	s.Committed = strings.Contains(f[3], "c")
	s.Tombstone = strings.Contains(f[3], "d")
	if s.PV, err = strconv.ParseUint(f[4], 10, 64); err != nil {
		return state{}, fmt.Errorf("cric: state %q: %w", raw, err)
	}
	if s.PB, err = parseBallot(f[5]); err != nil {
		return state{}, err
	}
	if len(f) == 7 {
		s.Prev = f[6]
	}
	s.Digest = m[metaDigest]
	return s, nil
}

// digest is a value's data digest, kept in metadata beside the Paxos state
// (§5.2.3) so a reader can tell copies apart without their data.
func digest(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:8])
}

// promise is the Prepare logic the proposer runs for the acceptor (§5.2.1,
// Fig. 5.6b): the state after promising ballot b for version n, or ok false
// if the acceptor would refuse. superseded says it refuses because it has
// moved past version n (accepted or promised a later version), which means
// version n is chosen.
func (s state) promise(n uint64, b Ballot) (next state, ok, superseded bool) {
	switch {
	case s.V > n || s.PV > n:
		return s, false, true
	case s.PV == n && !s.PB.Less(b):
		return s, false, false
	}
	s.PV, s.PB = n, b
	return s, true, false
}

// accept is the Accept logic: the state after accepting value w (digest d,
// tombstone del) for version n in ballot b, or ok false. In the fast round
// (b zero) an acceptor accepts at most one value per version: only if it
// has accepted nothing for n and promised nothing above #0 for it. Accepting
// version n garbage-collects the state of earlier versions (§5.2.3).
func (s state) accept(n uint64, b Ballot, w, d string, del bool) (next state, ok, superseded bool) {
	switch {
	case s.V > n || s.PV > n:
		return s, false, true
	case s.V == n && b.IsFast():
		return s, false, false // one value per acceptor in the fast round
	case s.PV == n && b.Less(s.PB):
		return s, false, false
	}
	return state{V: n, B: b, W: w, Digest: d, Tombstone: del, PV: n, PB: b}, true, false
}
