package server

import (
	"os"
	"path/filepath"
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
