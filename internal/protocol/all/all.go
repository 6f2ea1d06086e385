// Package all registers every keyspace protocol: import it (for its side
// effect) in a program or test that needs the whole registry. Adding a
// protocol is a new package under internal/protocol/ and one import here.
package all

import (
	_ "github.com/lightcone/lightcone/internal/protocol/catenae"   // Catenae: epoch messages, transaction chains
	_ "github.com/lightcone/lightcone/internal/protocol/cric"      // CRIC: CPaxos on storage services
	_ "github.com/lightcone/lightcone/internal/protocol/dirrc"     // directory-based release consistency
	_ "github.com/lightcone/lightcone/internal/protocol/dirsc"     // directory-based SC
	_ "github.com/lightcone/lightcone/internal/protocol/fastpaxos" // CRIC baseline: Fast Paxos with replica VMs
	_ "github.com/lightcone/lightcone/internal/protocol/lease"     // GlobLease
	_ "github.com/lightcone/lightcone/internal/protocol/meteor"    // MeteorShower
	_ "github.com/lightcone/lightcone/internal/protocol/occ"       // Catenae baseline: Paxos commit over OCC
	_ "github.com/lightcone/lightcone/internal/protocol/ppaxos"    // CRIC baseline: pPaxos*
	_ "github.com/lightcone/lightcone/internal/protocol/quorum"    // the quorum baseline
	_ "github.com/lightcone/lightcone/internal/protocol/twopl"     // Catenae baseline: Paxos commit over 2PL
)
