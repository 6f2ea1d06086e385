package main

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/lightcone/lightcone/internal/server"
)

// TestVersion: `lightcone --version` and `lightcone version` print the
// same text, naming the release and the Go version; with VCS information
// in the build, the revision and whether the tree was modified.
func TestVersion(t *testing.T) {
	var outs []string
	for _, args := range [][]string{{"--version"}, {"version"}} {
		root := rootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("lightcone %s: %v", args[0], err)
		}
		outs = append(outs, out.String())
		for _, want := range []string{"lightcone " + server.Version + "\n", runtime.Version()} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("lightcone %s = %q; want it to contain %q", args[0], out.String(), want)
			}
		}
	}
	if outs[0] != outs[1] {
		t.Errorf("--version printed %q, version %q; want the same", outs[0], outs[1])
	}
	bi := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Path: "github.com/lightcone/lightcone", Version: "v0.1.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}
	got := versionText(bi, true)
	for _, want := range []string{"module:   github.com/lightcone/lightcone v0.1.0\n", "revision: abc123 (2026-01-02T03:04:05Z, with uncommitted changes)\n", "go:       go1.99 "} {
		if !strings.Contains(got, want) {
			t.Errorf("versionText = %q; want it to contain %q", got, want)
		}
	}
}
