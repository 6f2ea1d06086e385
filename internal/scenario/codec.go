package scenario

import (
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/sim"
)

// simCodec is every registered protocol's codec, the one a real node
// speaks. Every run carries its messages through it (sim.Config.Codec):
// each message is encoded when it leaves its node and decoded afresh where
// it arrives, so a field a protocol forgets to encode fails the run's
// check instead of surfacing on a real network. It costs quorum runs a
// fifth to a third of the simulator's speed, lease and meteor runs little
// (BenchmarkCodecInTheLoop).
var simCodec sim.Codec = sim.MustCodec(protocol.MessageTypes()...)
