package lease

import (
	"fmt"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
)

// Storage failure is fail-stop (doc.go, "Storage failure"): every read and
// write of the store goes through get and put, which stop the node on an
// error. The runtime then drops whatever the handler sends, so nothing
// leaves that depends on the failed call — a promise, a grant, an ack —
// and the replica, rebuilt from what its store kept, starts again.

// get reads key. On a failure it fail-stops the node and reads as absent;
// the caller may go on, since nothing it sends will leave.
func (r *Replica) get(e env.Env, key string) (store.Record, bool) {
	rec, ok, err := e.Store().Get(key)
	if err != nil {
		r.storeFailed(e, "read", key, err)
		return store.Record{}, false
	}
	return rec, ok
}

// put writes key. On a failure it fail-stops the node and reports false.
func (r *Replica) put(e env.Env, key string, rec store.Record) bool {
	if err := e.Store().Put(key, rec); err != nil {
		r.storeFailed(e, "write", key, err)
		return false
	}
	return true
}

func (r *Replica) storeFailed(e env.Env, op, key string, err error) {
	if r.ks.cfg.ignoreStoreErrors {
		return // teeth tests: the bug fail-stop prevents
	}
	e.FailStop(fmt.Errorf("lease: %s %q: %w", op, key, err))
}
