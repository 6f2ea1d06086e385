package demo

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDemoRunsAndCleansUp runs a short demo on local3 with the real binary
// and checks the report and that no server process or data is left behind.
func TestDemoRunsAndCleansUp(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process demo; skipped in -short")
	}
	bin := filepath.Join(t.TempDir(), "lightcone")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/lightcone").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var out bytes.Buffer
	err := Run(context.Background(), Options{World: "local3", PhaseDuration: 2 * time.Second, ClientsPerRegion: 2, Records: 100, Binary: bin, Out: &out})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	for _, want := range []string{"cluster up: 3 nodes connected", "quorum ONE/ALL p50", "quorum QUORUM/QUORUM p50", "a  write"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "errors\n") && !strings.Contains(out.String(), " 0 errors") {
		t.Errorf("demo reported errors:\n%s", out.String())
	}
	// No server process of this binary survives.
	if ps, _ := exec.Command("pgrep", "-f", bin+" server").Output(); len(bytes.TrimSpace(ps)) > 0 {
		t.Errorf("server processes left running: %s", ps)
	}
}
