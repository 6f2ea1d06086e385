package occ

import (
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/protocol/twopl"
)

// Name is the protocol's name in configuration.
const Name = twopl.OCCName

func init() {
	protocol.Register(protocol.Definition{
		Name:         Name,
		Title:        "Paxos commit over OCC",
		Summary:      "Catenae's OCC baseline: reads from a majority, validation by a majority's no-wait locks, Paxos commit, one retry",
		NewSettings:  func() any { return new(twopl.OCCConfig) },
		Build:        twopl.BuildOCC,
		MessageTypes: twopl.MessageTypes(),
		Transactions: "with every setting",
	})
}
