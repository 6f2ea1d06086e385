package main

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestBenchResultsOutOfGit: bench run's default results directory is
// ignored by git in a checkout, and its help says where results go.
func TestBenchResultsOutOfGit(t *testing.T) {
	b, err := os.ReadFile("../../.gitignore")
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(string(b), "\n"); !slices.Contains(lines, benchResultsDir+"/") {
		t.Errorf(".gitignore does not list %s/:\n%s", benchResultsDir, b)
	}
	if help := benchRunCmd().Long; !strings.Contains(help, "./"+benchResultsDir+"/NAME") {
		t.Errorf("bench run --help does not say results go to ./%s/NAME:\n%s", benchResultsDir, help)
	}
}
