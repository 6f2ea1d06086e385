// Package keyspace runs several keyspaces on one node: each keyspace is its
// own protocol instance (quorum with one policy, quorum with another, later
// GlobLease or MeteorShower), and the Mux routes client requests by their
// Keyspace, messages by an envelope naming the keyspace, and timers by a
// wrapped payload, and gives each keyspace its own view of the store
// (DESIGN.md: "Several keyspaces with different protocols live in one
// cluster at once"). The Mux is itself a protocol state machine: no I/O,
// deterministic, linted as one.
package keyspace

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

// Def is one keyspace.
type Def struct {
	Name    string
	Factory env.Factory
	// CondRefusal, if set, answers every conditional write
	// (wire.Request.Cond) to the keyspace before its protocol sees it:
	// the keyspace cannot apply them (protocol.CondRefusal).
	CondRefusal *wire.Error
	// TxnRefusal, if set, answers every transaction (wire.OpTxn) to the
	// keyspace before its protocol sees it: the keyspace cannot run them
	// (protocol.TxnRefusal).
	TxnRefusal *wire.Error
}

// Mux is the replica of a node serving several keyspaces. The first
// keyspace is the default: requests naming no keyspace go to it, and its
// keys are stored unprefixed.
type Mux struct {
	defs     []Def
	replicas []env.Replica
	envs     []*subEnv
}

// NewFactory returns the factory of multiplexing replicas. Names must be
// unique and free of '/'.
func NewFactory(defs []Def) (env.Factory, error) {
	if len(defs) == 0 {
		return nil, fmt.Errorf("keyspace: no keyspaces")
	}
	seen := map[string]bool{}
	for _, d := range defs {
		if d.Name == "" || strings.ContainsAny(d.Name, "/\x00") || len(d.Name) > 64 {
			return nil, fmt.Errorf("keyspace: name %q: must be 1-64 characters without '/'", d.Name)
		}
		if seen[d.Name] {
			return nil, fmt.Errorf("keyspace: %q declared twice", d.Name)
		}
		seen[d.Name] = true
	}
	defs = slices.Clone(defs)
	return func(id wire.NodeID) env.Replica {
		m := &Mux{defs: defs}
		for _, d := range defs {
			m.replicas = append(m.replicas, d.Factory(id))
		}
		return m
	}, nil
}

// Names lists the keyspaces, the default first.
func (m *Mux) Names() []string {
	var out []string
	for _, d := range m.defs {
		out = append(out, d.Name)
	}
	return out
}

// Replica is the named keyspace's replica, or nil if there is none. Like
// every method of a replica, it belongs to the goroutine driving the Mux.
func (m *Mux) Replica(name string) env.Replica {
	i := slices.IndexFunc(m.defs, func(d Def) bool { return d.Name == name })
	if i < 0 {
		return nil
	}
	return m.replicas[i]
}

func (m *Mux) sub(e env.Env, i int) *subEnv {
	s := m.envs[i]
	s.Env = e
	return s
}

// Start implements env.Replica.
func (m *Mux) Start(e env.Env) {
	m.makeEnvs()
	for i := range m.defs {
		m.replicas[i].Start(m.sub(e, i))
	}
}

// makeEnvs makes each keyspace's Env: the default's keys escaped, a named
// one's under "k/<name>/" (AppendStoreKey).
func (m *Mux) makeEnvs() {
	m.envs = make([]*subEnv, len(m.defs))
	for i, d := range m.defs {
		prefix := ""
		if i > 0 {
			prefix = "k/" + d.Name + "/"
		}
		m.envs[i] = &subEnv{ks: uint32(i), prefix: prefix}
		m.envs[i].view.s = m.envs[i]
	}
}

// Request implements env.Replica: route by the request's keyspace.
func (m *Mux) Request(e env.Env, req *wire.Request) {
	i := 0
	if req.Keyspace != "" {
		i = slices.IndexFunc(m.defs, func(d Def) bool { return d.Name == req.Keyspace })
	}
	if i < 0 {
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: wire.ErrInvalid,
			Msg: fmt.Sprintf("keyspace: unknown keyspace %q (keyspaces: %s)", req.Keyspace, strings.Join(m.Names(), ", "))}})
		return
	}
	if ref := m.defs[i].CondRefusal; ref != nil && req.Cond && (req.Op == wire.OpPut || req.Op == wire.OpDelete) {
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: ref.Code, Msg: ref.Msg}})
		return
	}
	if ref := m.defs[i].TxnRefusal; ref != nil && req.Op == wire.OpTxn {
		e.Reply(&wire.Reply{ID: req.ID, Client: req.Client, Err: &wire.Error{Code: ref.Code, Msg: ref.Msg}})
		return
	}
	m.replicas[i].Request(m.sub(e, i), req)
}

// Step implements env.Replica: unwrap the envelope.
func (m *Mux) Step(e env.Env, from wire.NodeID, msg wire.Msg) {
	env, ok := msg.(*Envelope)
	if !ok || int(env.KS) >= len(m.replicas) {
		e.Log().Warn("keyspace: dropping a message for no keyspace", "kind", msg.Kind())
		return
	}
	m.replicas[env.KS].Step(m.sub(e, int(env.KS)), from, env.Msg)
}

// Timer implements env.Replica.
func (m *Mux) Timer(e env.Env, payload any) {
	t, ok := payload.(timerWrap)
	if !ok || int(t.ks) >= len(m.replicas) {
		return
	}
	m.replicas[t.ks].Timer(m.sub(e, int(t.ks)), t.payload)
}

type timerWrap struct {
	ks      uint32
	payload any
}

// subEnv is one keyspace's view of the node's Env.
type subEnv struct {
	env.Env
	ks     uint32
	prefix string
	view   view // what Store returns
}

func (s *subEnv) Send(to wire.NodeID, m wire.Msg) { s.Env.Send(to, &Envelope{KS: s.ks, Msg: m}) }

// ReplyRead implements env.ReadReplier: the node's, if it has one.
func (s *subEnv) ReplyRead(r *wire.Reply) { env.ReplyRead(s.Env, r) }

// PublishRead implements env.ReadPublisher: the node's, under the store key.
func (s *subEnv) PublishRead(key string, level wire.Level, r *wire.Reply, until int64) bool {
	return env.PublishRead(s.Env, s.storeKey(key), level, r, until)
}

// WithdrawRead implements env.ReadPublisher: the node's, under the store key.
func (s *subEnv) WithdrawRead(key string) { env.WithdrawRead(s.Env, s.storeKey(key)) }

// storeKey is key's key in the node's store.
func (s *subEnv) storeKey(key string) string {
	if s.prefix == "" {
		return escape(key)
	}
	return s.prefix + key
}

func (s *subEnv) SetTimer(d time.Duration, p any) env.TimerID {
	return s.Env.SetTimer(d, timerWrap{s.ks, p})
}

// Store is the keyspace's slice of the node's store. Named keyspaces live
// under "k/<name>/"; the default keyspace keeps its keys as they are, except
// that a key starting "k/" is stored as "k//..." — no keyspace name is empty,
// so it cannot collide with another keyspace's keys.
//
// It is made once per keyspace and reads the Env's store at each call: a
// wrapper made per call would be an allocation per request.
func (s *subEnv) Store() store.Store { return &s.view }

// view is a keyspace's store: the default keyspace's escaped, a named
// keyspace's prefixed.
type view struct{ s *subEnv }

func (v *view) Get(key string) (store.Record, bool, error) {
	return v.s.Env.Store().Get(v.s.storeKey(key))
}

func (v *view) Put(key string, r store.Record) error {
	return v.s.Env.Store().Put(v.s.storeKey(key), r)
}

func escape(key string) string {
	if strings.HasPrefix(key, "k/") {
		return "k//" + key[2:]
	}
	return key
}

// AppendStoreKey appends to dst the store key under which the Mux of the
// keyspaces names (the default first: Names) keeps key of keyspace ks
// (empty: the default), as view does; false if ks is not one of names.
func AppendStoreKey(dst []byte, names []string, ks string, key []byte) ([]byte, bool) {
	i := 0
	if ks != "" {
		if i = slices.Index(names, ks); i < 0 {
			return dst, false
		}
	}
	if i > 0 {
		dst = append(append(append(dst, "k/"...), names[i]...), '/')
		return append(dst, key...), true
	}
	if len(key) >= 2 && key[0] == 'k' && key[1] == '/' {
		return append(append(dst, "k//"...), key[2:]...), true
	}
	return append(dst, key...), true
}

// The rest of Env passes through; listed so the type documents itself.
func (s *subEnv) Rand() *rand.Rand         { return s.Env.Rand() }
func (s *subEnv) Topology() *topo.Topology { return s.Env.Topology() }
func (s *subEnv) Log() *slog.Logger        { return s.Env.Log() }

// Envelope carries a keyspace's message between nodes.
type Envelope struct {
	KS    uint32
	Msg   wire.Msg
	codec *wire.Codec // decodes Msg (receiving side only)
}

// Kind is the inner message's kind, so message counts stay per protocol
// message.
func (e *Envelope) Kind() string { return e.Msg.Kind() }

// BaseKind is the kind the envelope registers under with the codec.
func (*Envelope) BaseKind() string { return "keyspace.envelope" }

// Inner implements wire.Wrapper: a storage service's runtime finds the
// request inside.
func (e *Envelope) Inner() wire.Msg { return e.Msg }

// Rewrap implements wire.Wrapper: the service's answer goes back to the
// same keyspace.
func (e *Envelope) Rewrap(m wire.Msg) wire.Msg { return &Envelope{KS: e.KS, Msg: m} }

// AppendPayload implements wire.Encodable.
func (e *Envelope) AppendPayload(b []byte) []byte {
	b = wire.AppendUvarint(b, uint64(e.KS))
	inner, err := wire.AppendMsg(nil, e.Msg)
	if err != nil {
		inner = nil // the receiver rejects an empty inner message
	}
	return wire.AppendBytes(b, inner)
}

// DecodePayload implements wire.Encodable.
func (e *Envelope) DecodePayload(d *wire.Decoder) {
	ks := d.Uvarint()
	inner := d.Bytes()
	if d.Err() != nil {
		return
	}
	if ks > 1<<16 {
		d.Fail(fmt.Errorf("keyspace: envelope for keyspace %d", ks))
		return
	}
	m, err := e.codec.Decode(inner)
	if err != nil {
		d.Fail(err)
		return
	}
	e.KS, e.Msg = uint32(ks), m
}

// MessageTypes registers the envelope, whose inner messages inner decodes.
// The node's codec is then NewCodec(keyspace.MessageTypes(inner)).
func MessageTypes(inner *wire.Codec) []wire.MsgType {
	return []wire.MsgType{{Kind: "keyspace.envelope", New: func() wire.Encodable { return &Envelope{codec: inner} }}}
}

// Codec builds the codec of a multiplexed node: envelopes around the
// protocols' messages.
func Codec(inner *wire.Codec) (*wire.Codec, error) { return wire.NewCodec(MessageTypes(inner)) }
