package scenario

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/check"
)

// TestOpsPerClient: each client runs exactly ops_per_client operations and
// the run ends when they are done, long before Duration.
func TestOpsPerClient(t *testing.T) {
	res, err := Run(Config{World: "local3", Clients: 3, ClosedLoop: true, OpsPerClient: 50, Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ops != 150 {
		t.Errorf("Ops = %d; want 3 clients × 50", res.Ops)
	}
	if res.SimSeconds <= 0 || res.SimSeconds > 60 {
		t.Errorf("SimSeconds = %g; want the run to stop once the clients are done (well before 3600)", res.SimSeconds)
	}
}

// TestBatch: with batch B, each measured operation of a locking protocol is
// one hold of B workload operations on one key.
func TestBatch(t *testing.T) {
	wl := workloadYAML(t, "{preset: f, record_count: 100, read_proportion: 0, read_modify_write_proportion: 1}")
	res, err := Run(Config{World: "dir2", Protocol: "rc", Clients: 2, ClosedLoop: true, OpsPerClient: 10, Batch: 4,
		Duration: time.Hour, Workload: wl})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ops != 20 || res.Batch != 4 {
		t.Errorf("Ops, Batch = %d, %d; want 20 holds of 4", res.Ops, res.Batch)
	}
	kinds := map[check.Kind]int{}
	keys := map[int64]string{} // client → key of its open hold
	for _, op := range res.History.Ops {
		kinds[op.Kind]++
		switch op.Kind {
		case check.Acquire:
			keys[op.Client] = op.Key
		case check.Read, check.Write:
			if keys[op.Client] != op.Key {
				t.Errorf("client %d accessed %q inside its hold of %q", op.Client, op.Key, keys[op.Client])
			}
		}
	}
	if kinds[check.Acquire] != 20 || kinds[check.Read] != 80 || kinds[check.Write] != 80 {
		t.Errorf("acquires, reads, writes = %d, %d, %d; want 20, 80, 80", kinds[check.Acquire], kinds[check.Read], kinds[check.Write])
	}
	if res.Check == nil || res.Check.Verdict != "pass" {
		t.Errorf("check = %+v; want pass", res.Check)
	}
	_, err = Check(Config{World: "local3", Batch: 2})
	if err == nil || !strings.Contains(err.Error(), "batch: 2") {
		t.Errorf("batch 2 on quorum: %v; want an error naming batch", err)
	}
}

func workloadYAML(t *testing.T, s string) yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	return *n.Content[0]
}
