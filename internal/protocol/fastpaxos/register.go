package fastpaxos

import (
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/protocol/vmpaxos"
)

// Name is the protocol's name in configuration.
const Name = "fastpaxos"

func init() {
	protocol.Register(vmpaxos.Definition(Name, "Fast Paxos (replica VMs)",
		"CRIC's baseline: Fast Paxos with active acceptor processes on one node per region, proposers at gateways, a fast round then classic recovery",
		vmpaxos.ModeLogic))
}
