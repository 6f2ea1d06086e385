package sim

import "github.com/lightcone/lightcone/internal/wire"

// Step-by-step driving: a test that holds every message its nodes send
// (by wrapping the Factory's replicas' Env, as simtest.Interaction does)
// hands each one over itself, when its script says so, and the run
// processes it at once. Neither call draws from the network's random
// stream, so a script's runs are as deterministic as a seed's.

// Deliver hands m to node to now, as sent by from, bypassing the network
// model (no delay, loss, duplication or partition); Run(Now()) processes
// it. A node that is down when it arrives drops it, as from the network.
func (s *Sim) Deliver(from, to wire.NodeID, m wire.Msg) {
	s.schedule(event{at: s.now, kind: evDeliver, node: to, from: from, msg: m})
}

// Request hands req to its gateway now, as from a client next to it;
// Run(Now()) processes it. Its reply goes to the client the usual way
// (Config.OnReply), from the gateway's own region.
func (s *Sim) Request(gateway wire.NodeID, req *wire.Request) {
	s.clients[req.Client] = s.topo.RegionOf(gateway)
	s.owe(req.Client)
	s.schedule(event{at: s.now, kind: evRequest, node: gateway, req: req})
}
