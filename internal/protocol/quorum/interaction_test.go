package quorum_test

import (
	"testing"

	"github.com/lightcone/lightcone/internal/simtest"
)

// TestInteraction runs the step-by-step scripts in testdata (simtest.Interaction):
// a reader sees each message of a quorum write and a read repair.
func TestInteraction(t *testing.T) {
	simtest.RunInteractions(t, "testdata/*.txt", nil)
}
