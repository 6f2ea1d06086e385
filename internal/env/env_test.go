package env

import (
	"errors"
	"testing"
)

// stopEnv records FailStop causes; every other method is unused.
type stopEnv struct {
	Env
	causes []error
}

func (s *stopEnv) FailStop(cause error) { s.causes = append(s.causes, cause) }

// TestInvariant: a holding invariant does nothing; a broken one fail-stops
// with an error that wraps ErrInvariant and says what broke.
func TestInvariant(t *testing.T) {
	e := &stopEnv{}
	if !Invariant(e, true, "never shown %d", 1) || len(e.causes) != 0 {
		t.Fatalf("a holding invariant fail-stopped: %v", e.causes)
	}
	if Invariant(e, false, "promise of %q fell from %d to %d", "k", 3, 2) {
		t.Fatal("Invariant(false) reported true")
	}
	if len(e.causes) != 1 || !errors.Is(e.causes[0], ErrInvariant) {
		t.Fatalf("causes %v; want one wrapping ErrInvariant", e.causes)
	}
	if got, want := e.causes[0].Error(), `invariant violated: promise of "k" fell from 3 to 2`; got != want {
		t.Fatalf("cause %q; want %q", got, want)
	}
}
