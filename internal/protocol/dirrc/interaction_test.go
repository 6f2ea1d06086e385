package dirrc_test

import (
	"testing"

	"github.com/lightcone/lightcone/internal/simtest"
)

// TestInteraction runs the step-by-step scripts in testdata
// (simtest.Interaction): a release without an acquire is refused with
// ErrInvalid naming the rule, and an acquire, write and release go through
// the directory's group.
func TestInteraction(t *testing.T) {
	simtest.RunInteractions(t, "testdata/*.txt", nil)
}
