package lease

import "github.com/lightcone/lightcone/internal/env"

// sweep forgets per-key state that has run out — expired leases, lease
// records, grants, promises, fences, master leases, secondary leases — and
// the cached mastership records of keys this node does not master (they
// are reloaded from the store when needed), so a node's memory follows the
// keys in use rather than every key it ever touched. Every deletion here
// is of state that no longer has any effect.
func (r *Replica) sweep(e env.Env) {
	now := e.Now()
	for k, l := range r.leases { // lint:order-independent: deletes only
		if l.exp <= now {
			delete(r.leases, k)
		}
	}
	for k, recs := range r.records { // lint:order-independent: deletes only
		for n, exp := range recs { // lint:order-independent: deletes only
			if exp <= now {
				delete(recs, n)
			}
		}
		if len(recs) == 0 {
			delete(r.records, k)
		}
	}
	for k, gs := range r.pending { // lint:order-independent: deletes only
		for n, g := range gs { // lint:order-independent: deletes only
			if g.expiry <= now {
				delete(gs, n)
			}
		}
		if len(gs) == 0 {
			delete(r.pending, k)
		}
	}
	for k, until := range r.voteBlock { // lint:order-independent: deletes only
		if until <= now {
			delete(r.voteBlock, k)
		}
	}
	for k, f := range r.keyFence { // lint:order-independent: deletes only
		if f.until <= now {
			delete(r.keyFence, k)
		}
	}
	for k, until := range r.mlease { // lint:order-independent: deletes only
		if until <= now {
			delete(r.mlease, k)
		}
	}
	for k, l := range r.secLeases { // lint:order-independent: deletes only
		if l.exp <= now && l.nonce == 0 {
			delete(r.secLeases, k)
		}
	}
	for k, m := range r.metas { // lint:order-independent: deletes only
		if m.accepted.Node != r.id && m.promised == m.accepted && r.campaigns[k] == nil && r.renewing[k] == nil {
			delete(r.metas, k)
		}
	}
}
