package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestSimExitsNonZeroOnViolation: a configuration whose history the
// checker rejects (quorum ONE/ONE checked for linearizability across four
// regions) is a failed command with exit status 1 and says VIOLATION; a
// passing one is not.
func TestSimExitsNonZeroOnViolation(t *testing.T) {
	run := func(args ...string) (string, error) {
		cmd := simCmd()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetArgs(args)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := cmd.Execute()
		return out.String(), err
	}
	out, err := run("--world", "globlease4", "--read", "ONE", "--write", "ONE", "--check", "linearizable", "--workload", "a", "--duration", "5s")
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(err.Error(), "VIOLATION (seed 1)") {
		t.Fatalf("sim ONE/ONE checked linearizable: error %v; want exit status 1 naming VIOLATION and the seed\n%s", err, out)
	}
	if !strings.Contains(out, "VIOLATION") {
		t.Errorf("report lacks the verdict:\n%s", out)
	}
	if out, err := run("--world", "local3", "--duration", "2s"); err != nil {
		t.Fatalf("a passing run failed: %v\n%s", err, out)
	}
	if _, err := run("--world", "local3", "--duration", "1s", "--set", "lease_length=1s"); err == nil || !strings.Contains(err.Error(), `protocol quorum has no setting "lease_length"`) {
		t.Errorf("--set lease_length on quorum: error %v; want it to name lease_length", err)
	}
}
