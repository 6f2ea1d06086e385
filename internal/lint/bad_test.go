package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLintCatchesViolations runs the checks over a package that breaks every
// rule, so the lint cannot silently pass by checking nothing.
func TestLintCatchesViolations(t *testing.T) {
	dir := t.TempDir()
	src := `package bad

import (
	"math/rand/v2"
	"sync"
	"time"
)

var mu sync.Mutex

func f(m map[string]int) int {
	go func() {}()
	c := make(chan int)
	_ = c
	time.Sleep(time.Second)
	_ = time.Now()
	n := rand.IntN(3)
	for k := range m {
		n += len(k)
	}
	for k := range m { // lint:order-independent: sums are commutative
		n += len(k)
	}
	r := rand.New(rand.NewPCG(1, 2))
	return n + r.IntN(2)
}
`
	if err := os.WriteFile(filepath.Join(dir, "bad.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := lintPackage(t, dir, dir)
	var msgs []string
	for _, f := range got {
		msgs = append(msgs, f.pos+" "+f.msg)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"bad.go:5 imports sync", "go statement", "channel type", "time.Sleep", "time.Now", "rand.IntN", "bad.go:18 range over a map"} {
		if !strings.Contains(all, want) {
			t.Errorf("lint findings lack %q; got:\n%s", want, all)
		}
	}
	if strings.Contains(all, "bad.go:21") || strings.Contains(all, "rand.New") || strings.Contains(all, "rand.NewPCG") {
		t.Errorf("lint flagged allowed code; got:\n%s", all)
	}
}
