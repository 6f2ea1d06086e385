package dirsc_test

import (
	"testing"

	"github.com/lightcone/lightcone/internal/simtest"
)

// TestInteraction runs the step-by-step scripts in testdata
// (simtest.Interaction): with directory_shards, a sharded row's requests,
// invalidations and grants go to and from its shard's group alone.
func TestInteraction(t *testing.T) {
	simtest.RunInteractions(t, "testdata/*.txt", nil)
}
