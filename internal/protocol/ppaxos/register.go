package ppaxos

import (
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/protocol/vmpaxos"
)

// Name is the protocol's name in configuration.
const Name = "ppaxos"

func init() {
	protocol.Register(vmpaxos.Definition(Name, "pPaxos*",
		"CRIC's baseline: pPaxos with a fast round and garbage collection; acceptors are append-only logs, proposers append then read back (two round trips a phase)",
		vmpaxos.ModeLog))
}
