package lease_test

import (
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/check"
	"github.com/lightcone/lightcone/internal/protocol/lease"
	"github.com/lightcone/lightcone/internal/wire"
)

func affiliateConfig() lease.Config {
	return lease.Config{LeaseLength: 2 * time.Second, RenewTimeout: 300 * time.Millisecond, MasterLease: time.Second,
		ElectionTimeout: time.Second, WriteTimeout: 5 * time.Second, Affiliates: 1, HotRate: 10, HotWindow: 200 * time.Millisecond}
}

// affiliateScript: a key mastered in region a is read 50 times a second
// in region b, so its host there attaches the other region-b node as an
// affiliate. Then the host's link to the affiliate is cut and a client
// writes v2 and keeps reading.
func affiliateScript(t *testing.T, cfg lease.Config) (*script, wire.RequestID) {
	sc := newScript(t, `
name: two
nodes_per_region: 2
regions: [{name: a}, {name: b}]
links: [{from: a, to: b, one_way_ms: 50}]
`, cfg)
	key := sc.keyMasteredIn(0)
	host := sc.replica(key, 1)
	aff := sc.other(host)
	const t0 = 5 * time.Second
	sc.submit(t0, 1, aff, wire.OpPut, key, "v1")
	for i := range 60 {
		sc.submit(t0+200*time.Millisecond+time.Duration(i)*20*time.Millisecond, 1, aff, wire.OpGet, key, "")
	}
	sc.s.At(int64(t0+1500*time.Millisecond), func() { sc.s.Block(host, aff) })
	w := sc.submit(t0+1600*time.Millisecond, 1, aff, wire.OpPut, key, "v2")
	// Once the write is answered the client reads twice in a row: the
	// gateway spreads them over the host and the affiliate.
	sc.then(w, func() {
		now := time.Duration(sc.s.Now())
		r1 := sc.submit(now, 1, aff, wire.OpGet, key, "")
		sc.then(r1, func() { sc.submit(time.Duration(sc.s.Now()), 1, aff, wire.OpGet, key, "") })
	})
	sc.s.Run(int64(20 * time.Second))
	grants := 0
	for _, m := range sc.s.MessageCounts() {
		if m.Kind == "lease.sec_grant" {
			grants = m.Count
		}
	}
	if grants == 0 {
		t.Fatal("the hot key got no affiliate")
	}
	return sc, w
}

// TestAffiliatedNodes: a hot key gets an affiliate, and an update the host
// cannot forward to it waits for the affiliate's secondary lease to end,
// so no read after the write returns the old value.
func TestAffiliatedNodes(t *testing.T) {
	sc, w := affiliateScript(t, affiliateConfig())
	if r := sc.reply(w); r.Err != nil {
		t.Fatalf("write: %v", r.Err)
	}
	if res := check.SequentialPerKey(sc.hist, 0); res.Verdict != check.Pass {
		t.Fatalf("history: %v", res)
	}
}

// TestTeethAffiliateWait: a host that acknowledges before its affiliate
// has the update lets the write complete while the affiliate still serves
// the old value under its secondary lease; the client reads it after its
// own write, and the checker must object.
func TestTeethAffiliateWait(t *testing.T) {
	cfg := affiliateConfig()
	lease.UnsafeNoAffiliateWait(&cfg)
	sc, _ := affiliateScript(t, cfg)
	if res := check.SequentialPerKey(sc.hist, 0); res.Verdict != check.Violation {
		t.Fatalf("without the host's wait: %v; want a violation", res)
	}
}
