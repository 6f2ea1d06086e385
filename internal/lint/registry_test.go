package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/lightcone/lightcone/internal/protocol"
	_ "github.com/lightcone/lightcone/internal/protocol/all"
)

const modulePath = "github.com/lightcone/lightcone"

// registryImports are the protocol packages code outside internal/protocol
// may import: the registry and the package that registers every protocol.
var registryImports = []string{modulePath + "/internal/protocol", modulePath + "/internal/protocol/all"}

// catalogs are the files outside internal/protocol allowed to name a
// protocol: the experiment catalogs reproduce a named seed system's
// figures, so they choose a protocol as data, as a YAML file would
// (scenario.Config.Use("lease", ...)). They never branch on one; adding a
// protocol does not touch them.
var catalogs = []string{"internal/bench/catalog_*.go", "internal/bench/catalog.go"}

// TestNothingOutsideProtocolsNamesOne: outside internal/protocol/..., no
// non-test Go code imports a protocol package (other than the registry and
// internal/protocol/all) or spells a registered protocol's name as a
// string: the server, simulator, bench, realrun, demo and CLI read the
// registry (DESIGN.md, "Protocols are plug-ins"). A new protocol is one
// new package and one import in internal/protocol/all.
func TestNothingOutsideProtocolsNamesOne(t *testing.T) {
	names := protocol.Names()
	if len(names) < 3 {
		t.Fatalf("registry has %v; want every protocol registered", names)
	}
	found := protocolSites(t, moduleRoot(t), names)
	for _, f := range found {
		t.Errorf("%s: %s", f.pos, f.msg)
	}
	t.Logf("sites naming a protocol outside internal/protocol: %d", len(found))
}

// TestProtocolSitesHasTeeth: the check finds a protocol's import, its
// name in a switch and in a comparison, and leaves tests, catalogs and
// other strings alone.
func TestProtocolSitesHasTeeth(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("internal/server/bad.go", `package server
import _ "github.com/lightcone/lightcone/internal/protocol/lease"
func f(p string) bool {
	switch p {
	case "meteor":
		return true
	}
	return p == "lease" || p == "leases"
}
`)
	write("internal/server/ok_test.go", "package server\nvar _ = \"lease\"\n")
	write("internal/bench/catalog_x.go", "package bench\nvar _ = \"lease\"\n")
	write("internal/protocol/x/x.go", "package x\nvar _ = \"lease\"\n")
	found := protocolSites(t, root, []string{"quorum", "lease", "meteor"})
	var got []string
	for _, f := range found {
		got = append(got, filepath.Base(strings.Split(f.pos, ":")[0])+": "+f.msg)
	}
	if len(found) != 3 {
		t.Fatalf("found %d sites; want 3 (the import, the case, the comparison): %v", len(found), got)
	}
}

// protocolSites lists the non-test Go files under root, outside
// internal/protocol and the catalogs, that import a protocol package or
// spell one of names as a string.
func protocolSites(t *testing.T, root string, names []string) []finding {
	t.Helper()
	var found []finding
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "internal/protocol" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		catalog := false
		for _, pat := range catalogs {
			if ok, _ := filepath.Match(pat, rel); ok {
				catalog = true
			}
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, modulePath+"/internal/protocol") && !slices.Contains(registryImports, p) {
				found = append(found, finding{fset.Position(imp.Pos()).String(), "imports " + p + "; read the registry (internal/protocol) instead"})
			}
		}
		if catalog {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && slices.Contains(names, s) {
				found = append(found, finding{fset.Position(lit.Pos()).String(), "names protocol " + strconv.Quote(s) + "; read the registry instead"})
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].pos < found[j].pos })
	return found
}

// TestEveryProtocolIsRegistered: every package under internal/protocol/
// that registers itself is imported by internal/protocol/all, has a
// doc.go, message types, and settings with YAML names.
func TestEveryProtocolIsRegistered(t *testing.T) {
	root := moduleRoot(t)
	all, err := os.ReadFile(filepath.Join(root, "internal/protocol/all/all.go"))
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := os.ReadDir(filepath.Join(root, "internal/protocol"))
	if err != nil {
		t.Fatal(err)
	}
	registered := 0
	for _, d := range dirs {
		reg := filepath.Join(root, "internal/protocol", d.Name(), "register.go")
		if _, err := os.Stat(reg); err != nil {
			continue
		}
		registered++
		pkg := modulePath + "/internal/protocol/" + d.Name()
		if !strings.Contains(string(all), strconv.Quote(pkg)) {
			t.Errorf("internal/protocol/all does not import %s", pkg)
		}
		if _, err := os.Stat(filepath.Join(root, "internal/protocol", d.Name(), "doc.go")); err != nil {
			t.Errorf("protocol %s has no doc.go (the algorithm, guarantee, clock assumption, seed section)", d.Name())
		}
	}
	if registered != len(protocol.Names()) {
		t.Errorf("%d packages have a register.go; the registry has %v", registered, protocol.Names())
	}
	for _, d := range protocol.All() {
		if len(d.MessageTypes) == 0 {
			t.Errorf("protocol %s registers no message types", d.Name)
		}
		if len(protocol.SettingNames(d)) == 0 {
			t.Errorf("protocol %s has no settings", d.Name)
		}
		if d.Title == "" || d.Summary == "" {
			t.Errorf("protocol %s: title and summary are required", d.Name)
		}
	}
}

// leaseClocks are the protocols whose safety rests on measuring durations
// (leases): they read env.Env.Now, which never steps in the real runtime,
// and never env.Env.Wall, which does (lease doc.go, "Clocks").
var leaseClocks = []string{"internal/protocol/lease"}

func TestLeasesAreMeasuredOnNow(t *testing.T) {
	root := moduleRoot(t)
	for _, dir := range leaseClocks {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Wall" {
					t.Errorf("%s: reads the wall clock; leases are measured on env.Env.Now", fset.Position(sel.Pos()))
				}
				return true
			})
		}
	}
}
