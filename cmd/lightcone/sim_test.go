package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
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

// TestSimYAMLErrors: a mistake in any YAML file sim reads (--config,
// --faults, a --world file) is an error naming the file, the mistake's
// line and the field, and for an unknown field the valid ones.
func TestSimYAMLErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", write("lc.yaml", "seed: 1\nprotcol: quorum\n")},
			`lc.yaml:2: unknown field "protcol" in scenario (did you mean "protocol"?); valid fields: seed, world, protocol, settings, workload,`},
		{[]string{"--config", write("syntax.yaml", "seed: 1\nworld: [local3\nclients: 3\n")},
			`syntax.yaml:2: syntax error: did not find expected ',' or ']'`},
		{[]string{"--config", write("settings.yaml", "protocol: lease\nsettings:\n  lease_lenght: 1s\n")},
			`settings.yaml:3: settings: protocol lease has no setting "lease_lenght" (valid: `},
		{[]string{"--config", write("workload.yaml", "workload:\n  preset: a\n  record_cont: 10\n")},
			`workload.yaml:3: unknown field "record_cont" in workload (did you mean "record_count"?); valid fields: preset,`},
		{[]string{"--faults", write("faults.yaml", "faults:\n  - {at: 1s, crash: local3-0}\n  - {at: 2s, crsh: local3-1}\n")},
			`faults.yaml:3: unknown field "crsh" in faults[1] (did you mean "crash"?); valid fields: at, for, crash, partition, net, skew, outage`},
		{[]string{"--world", write("w.yaml", "name: w\nnodes_per_region: 1\nregions: [{name: a, lattitude: 3}]\n")},
			`w.yaml:3: unknown field "lattitude" in regions[0]; valid fields: name,`},
	} {
		cmd := simCmd()
		cmd.SetOut(io.Discard)
		cmd.SetArgs(append(tc.args, "--duration", "1s"))
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, tc.want)) {
			t.Errorf("sim %s: %v;\nwant %s/%s...", strings.Join(tc.args, " "), err, dir, tc.want)
		}
	}
}
