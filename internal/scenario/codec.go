package scenario

import (
	"sync"

	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/sim"
	"github.com/lightcone/lightcone/internal/wire"
)

// simCodec is every registered protocol's codec, the one a real node
// speaks. Every run carries its messages through it (sim.Config.Codec):
// each message is encoded when it leaves its node and decoded afresh where
// it arrives, so a field a protocol forgets to encode fails the run's
// check instead of surfacing on a real network. BenchmarkSim measures
// what it costs each protocol (codec=on against codec=off).
var simCodec sim.Codec = new(registryCodec)

// registryCodec is the registry's codec, built at its first use rather
// than at this package's initialization, so that it also knows protocols
// registered after it: a test-only protocol registered by a test
// package's init (internal/protocol/rsm's register).
type registryCodec struct {
	once sync.Once
	c    *wire.Codec
}

func (r *registryCodec) get() *wire.Codec {
	r.once.Do(func() { r.c = sim.MustCodec(protocol.MessageTypes()...) })
	return r.c
}

func (r *registryCodec) Append(dst []byte, m wire.Msg) ([]byte, error) {
	return r.get().Append(dst, m)
}

func (r *registryCodec) Decode(b []byte) (wire.Msg, error) { return r.get().Decode(b) }

// runCodec is the codec a run's simulator gets for c: the registry's
// *wire.Codec itself rather than its wrapper, so that the simulator
// recognizes it and decodes through one reused wire.Decoder.
func runCodec(c sim.Codec) sim.Codec {
	if r, ok := c.(*registryCodec); ok {
		return r.get()
	}
	return c
}
