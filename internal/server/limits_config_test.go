package server

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lightcone/lightcone/internal/api/resp"
)

// TestLoadConfigClientLimits: the client limits read from YAML in Redis's
// size units.
func TestLoadConfigClientLimits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	yaml := "maxclients: 50\nclient_query_buffer_limit: 64mb\nclient_output_buffer_limit: 1000000\nclient_buffer_budget: 2gb\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxClients != 50 || c.ClientQueryBufferLimit != 64<<20 || c.ClientOutputBufferLimit != 1000000 || c.ClientBufferBudget != resp.ByteSize(2<<30) {
		t.Errorf("LoadConfig = maxclients %d, query %d, output %d, budget %d; want 50, 64 MiB, 1000000, 2 GiB",
			c.MaxClients, c.ClientQueryBufferLimit, c.ClientOutputBufferLimit, c.ClientBufferBudget)
	}
	if err := os.WriteFile(path, []byte("client_buffer_budget: lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path); err == nil {
		t.Error("LoadConfig of client_buffer_budget: lots succeeded; want an error")
	}
}
