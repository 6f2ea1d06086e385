package simtest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "run only this seed (simtest: replay a failure)")
	seedsFlag = flag.Int("seeds", 0, "seeds per swarm, per variant (simtest; 0: the test's default)")
	firstFlag = flag.Uint64("first", 1, "first seed of a swarm's range (simtest; a soak explores new seeds with it)")
	soakFlag  = flag.Bool("soak", false, "deep soak: every variant, 5000 seeds per swarm unless -seeds (simtest, scripts/soak.sh)")
)

// SoakSeeds is how many seeds a swarm runs under -soak without -seeds.
const SoakSeeds = 5000

// Seed is the seed -seed asks to replay, or 0.
func Seed() uint64 { return *seedFlag }

// Soak reports whether -soak asks for the deep soak: tests run every
// variant (each level combination, each mode) and SoakSeeds seeds.
func Soak() bool { return *soakFlag }

// Seeds is how many seeds a seeded test runs: -seeds if set, else SoakSeeds
// under -soak, else ci (short under -short). Tests with their own loops use
// it so that -seeds and -soak mean the same everywhere.
func Seeds(ci, short int) int {
	switch {
	case *seedsFlag > 0:
		return *seedsFlag
	case *soakFlag:
		return SoakSeeds
	case testing.Short():
		return short
	}
	return ci
}

// Replay is the one command that reruns seed of the running test (t.Name(),
// subtests included) in this package: `go test ./internal/protocol/x -run
// '^TestX$/^sub$' -seed N -v`, with -soak when the soak is running (a soak
// may run variants CI does not). Seed 0: the whole test.
func Replay(tb testing.TB, seed uint64) string {
	var run []string
	for _, part := range strings.Split(tb.Name(), "/") {
		run = append(run, "^"+regexp.QuoteMeta(part)+"$")
	}
	cmd := fmt.Sprintf("go test %s -run '%s'", packageDir(), strings.Join(run, "/"))
	if seed != 0 {
		cmd += fmt.Sprintf(" -seed %d", seed)
	}
	if *soakFlag {
		cmd += " -soak"
	}
	return cmd + " -v"
}

// packageDir is the running test's package as a path from the module root
// ("./internal/protocol/quorum"): go test runs a test binary in its
// package's directory.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	root, err := moduleRoot(wd)
	if err != nil {
		return "."
	}
	rel, err := filepath.Rel(root, wd)
	if err != nil || rel == "." {
		return "."
	}
	return "./" + filepath.ToSlash(rel)
}

// moduleRoot is the nearest directory at or above dir holding a go.mod.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", errors.New("simtest: no go.mod above " + dir)
		}
		d = up
	}
}
