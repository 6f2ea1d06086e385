package dirsc_test

import (
	"testing"

	"github.com/lightcone/lightcone/internal/protocol/dirsc"
	"github.com/lightcone/lightcone/internal/scenario"
	"github.com/lightcone/lightcone/internal/simtest"
)

// TestTeethNoInvalidationWait: a directory that grants Modified (or
// Shared) as soon as it has sent its invalidations, without waiting for
// their acknowledgements or for sharers' leases to end, lets two
// frontends serve the same row at once; the linearizability checker must
// reject some run. The same seeds with the wait kept pass.
func TestTeethNoInvalidationWait(t *testing.T) {
	simtest.Teeth{Seeds: 200, Unsafe: func(tb testing.TB, seed uint64) scenario.Config {
		c := config(tb, seed)
		dirsc.UnsafeNoInvalidationWait(c.Settings.(*dirsc.Config))
		return c
	}, Safe: config}.Run(t)
}
