package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/svchost"
)

// TestStorageServicesConfig: the storage_services section decodes by
// region name, the S3 fields inline, the timeout as a duration.
func TestStorageServicesConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	err := os.WriteFile(path, []byte(`
storage_services:
  local: {backend: s3, endpoint: "127.0.0.1:9000", bucket: lc, prefix: east/, access_key: k, secret_key: s, timeout: 3s}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	b := c.StorageServices["local"]
	if b.Backend != svchost.BackendS3 || b.Endpoint != "127.0.0.1:9000" || b.Bucket != "lc" || b.Prefix != "east/" ||
		b.AccessKey != "k" || b.SecretKey != "s" || b.Timeout != 3*time.Second {
		t.Fatalf("storage_services.local = %+v", b)
	}
	if err := os.WriteFile(path, []byte("storage_services: {local: {backend: s3, endpont: x}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path); err == nil {
		t.Fatal("a misspelt storage_services field loaded")
	}
}

// TestCRICInvalidQuorumsRefusedAtStart: a cric keyspace whose quorums
// cannot intersect is refused when the server starts, with the reason;
// so are storage faults without fault_injection.
func TestCRICInvalidQuorumsRefusedAtStart(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"keyspace: {protocol: cric, replicas_per_region: 4, replica_quorum: 2}",
			"replica_quorum = 2 of 4: two quorums need not intersect"},
		{"keyspace: {protocol: cric, replicas_per_region: 3, replica_super_quorum: 2}",
			"replica_super_quorum = 2 with replica_quorum 2 of 3: two super quorums and a quorum need not share an acceptor"},
		{"keyspace: {protocol: cric, regions: [nowhere]}", `"nowhere" is not a region of the world`},
		{"keyspaces: [{name: c, protocol: cric, region_quorum: 2}]", "region_quorum = 2; must be 1 to 1"},
		{"storage_services: {local: {faults: {error: 0.5}}}", "storage_services.local.faults needs fault_injection"},
	} {
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte(tc.yaml+"\nresp_addr: \"off\"\ngrpc_addr: \"off\"\nhttp_addr: \"off\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadConfig(path)
		if err == nil {
			c.DataDir = t.TempDir()
			err = Run(t.Context(), c)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("server with %s: %v; want refused: %s", tc.yaml, err, tc.want)
		}
	}
}
