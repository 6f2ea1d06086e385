// Package lint holds tests that enforce the rules protocol code lives by
// (DESIGN.md, "Rules for protocol code"): a protocol is a deterministic,
// I/O-free state machine that sees the world only through env.Env.
package lint

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// deterministic lists the directories (relative to the module root, each
// with its subdirectories) whose non-test code must stay pure.
var deterministic = []string{"internal/protocol", "internal/hlc", "internal/ring", "internal/keyspace", "internal/storagesvc"}

// forbiddenImports may not be imported by deterministic code.
var forbiddenImports = map[string]string{
	"sync":        "protocols run on one event loop; no locks",
	"sync/atomic": "protocols run on one event loop; no atomics",
	"net":         "messages go through env.Send",
	"net/http":    "messages go through env.Send",
	"os":          "storage goes through env.Store",
	"io/ioutil":   "storage goes through env.Store",
	"math/rand":   "randomness comes from env.Rand (math/rand/v2 types only)",
	"crypto/rand": "randomness comes from env.Rand",
	"unsafe":      "no",
}

// forbiddenTime are the functions of package time that read or wait on the
// real clock; time.Duration and its constants are fine.
var forbiddenTime = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true,
}

// allowedRand are the math/rand/v2 functions that build a seeded source
// rather than use the global one.
var allowedRand = map[string]bool{"New": true, "NewPCG": true, "NewChaCha8": true, "NewZipf": true}

func moduleRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

type finding struct{ pos, msg string }

func TestProtocolCodeIsDeterministic(t *testing.T) {
	root := moduleRoot(t)
	var found []finding
	for _, dir := range deterministic {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() {
				found = append(found, lintPackage(t, root, path)...)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].pos < found[j].pos })
	for _, f := range found {
		t.Errorf("%s: %s", f.pos, f.msg)
	}
}

// lintPackage checks the non-test Go files of one directory.
func lintPackage(t *testing.T, root, dir string) []finding {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatalf("parse %s: %v", dir, err)
	}
	var out []finding
	add := func(p token.Pos, msg string) {
		pos := fset.Position(p)
		rel, _ := filepath.Rel(root, pos.Filename)
		out = append(out, finding{pos: rel + ":" + strconv.Itoa(pos.Line), msg: msg})
	}
	for _, pkg := range pkgs {
		var files []*ast.File
		for _, f := range pkg.Files {
			files = append(files, f)
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil), Error: func(error) {}}
		_, _ = conf.Check(pkg.Name, fset, files, info) // type errors surface in go vet, not here
		for _, f := range files {
			for _, imp := range f.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				if why, bad := forbiddenImports[path]; bad {
					add(imp.Pos(), "imports "+path+": "+why)
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.GoStmt:
					add(n.Pos(), "go statement: protocols never start goroutines")
				case *ast.SelectStmt:
					add(n.Pos(), "select: protocols never block on channels")
				case *ast.ChanType:
					add(n.Pos(), "channel type: protocols never use channels")
				case *ast.SelectorExpr:
					pkgIdent, ok := n.X.(*ast.Ident)
					if !ok {
						return true
					}
					obj, ok := info.Uses[pkgIdent].(*types.PkgName)
					if !ok {
						return true
					}
					switch obj.Imported().Path() {
					case "time":
						if forbiddenTime[n.Sel.Name] {
							add(n.Pos(), "time."+n.Sel.Name+": time comes from env.Now and env.SetTimer")
						}
					case "math/rand/v2":
						if _, isFunc := info.Uses[n.Sel].(*types.Func); isFunc && !allowedRand[n.Sel.Name] {
							add(n.Pos(), "rand."+n.Sel.Name+": the global source; use env.Rand")
						}
					}
				case *ast.RangeStmt:
					if tv, ok := info.Types[n.X]; ok {
						if _, isMap := tv.Type.Underlying().(*types.Map); isMap && !orderedOK(fset, f, n) {
							add(n.Pos(), "range over a map: iteration order is random; iterate sorted keys, or mark the loop `// lint:order-independent` with the reason")
						}
					}
				}
				return true
			})
		}
	}
	return out
}

// orderedOK reports whether the range statement carries a
// `lint:order-independent` comment on its line.
func orderedOK(fset *token.FileSet, f *ast.File, n *ast.RangeStmt) bool {
	line := fset.Position(n.Pos()).Line
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if fset.Position(c.Pos()).Line == line && strings.Contains(c.Text, "lint:order-independent") {
				return true
			}
		}
	}
	return false
}
