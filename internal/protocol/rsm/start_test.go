package rsm

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// nodeEnv is node 0's Env without a network: enough for a group of one.
type nodeEnv struct {
	env.Env
	st  store.Store
	rng *rand.Rand
}

func (n nodeEnv) Self() wire.NodeID                       { return 0 }
func (n nodeEnv) Store() store.Store                      { return n.st }
func (n nodeEnv) Rand() *rand.Rand                        { return n.rng }
func (n nodeEnv) SetTimer(time.Duration, any) env.TimerID { return 0 }
func (n nodeEnv) Send(to wire.NodeID, m wire.Msg)         { panic("a group of one sent a message") }
func (n nodeEnv) FailStop(cause error)                    { panic(cause) }

// logSM records the commands it applies.
type logSM struct{ cmds []string }

func (s *logSM) Apply(_ env.Env, _ uint64, cmd []byte) []byte {
	s.cmds = append(s.cmds, string(cmd))
	return nil
}
func (*logSM) Applied(env.Env, uint64, []byte) {}
func (*logSM) Readable(env.Env, uint64)        {}
func (*logSM) Snapshot(env.Env) []byte         { return nil }
func (*logSM) Restore(env.Env, []byte) error   { return nil }

// TestGroupOfOneLeadsAtStart: a group of one member is its own majority:
// it leads as Start returns, with no election timeout waited, and commits
// and applies a proposal within the Propose call — after a restart too.
func TestGroupOfOneLeadsAtStart(t *testing.T) {
	e := nodeEnv{st: store.NewMem(), rng: rand.New(rand.NewPCG(1, 2))}
	for run := range 2 {
		sm := &logSM{}
		g := New(Config{Group: "one", Members: []wire.NodeID{0}}, sm)
		g.Start(e)
		if !g.IsLeader() {
			t.Fatalf("run %d: not the leader after Start (leader %d)", run, g.Leader())
		}
		if err := g.Propose(e, []byte("x"), 0); err != nil {
			t.Fatalf("run %d: Propose: %v", run, err)
		}
		// A restart replays the first run's command before its own.
		if want := run + 1; len(sm.cmds) != want {
			t.Fatalf("run %d: applied %q; want %d commands", run, sm.cmds, want)
		}
	}
}
