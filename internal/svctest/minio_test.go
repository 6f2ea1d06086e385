package svctest

import (
	"os"
	"strings"
	"testing"
)

// TestCIBuildsThisMinIO keeps .ci/run's MinIO build on the version the
// tests look for.
func TestCIBuildsThisMinIO(t *testing.T) {
	b, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	v := MinIOModule[strings.LastIndexByte(MinIOModule, '@')+1:]
	if !strings.Contains(string(b), MinIOModule) || !strings.Contains(string(b), "minio-"+v) {
		t.Fatalf(".ci/run does not build %s into the cache directory minio-%s", MinIOModule, v)
	}
}
