package grpcapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lightcone/lightcone/internal/api/grpcapi/lightconev1"
)

// Paths relative to this package's directory.
const (
	protoFile = "../../../proto/lightcone/v1/lightcone.proto"
	genScript = "../../../proto/gen.sh"
	genDir    = "lightconev1"
)

// generated lists the files proto/gen.sh writes into lightconev1.
var generated = []string{"lightcone.pb.go", "lightcone_grpc.pb.go", "proto_hash.go"}

// TestProtoHash fails when the .proto changed but the checked-in code was
// not regenerated. It needs no tools.
func TestProtoHash(t *testing.T) {
	src, err := os.ReadFile(protoFile)
	if err != nil {
		t.Fatalf("read the .proto: %v", err)
	}
	sum := sha256.Sum256(bytes.ReplaceAll(src, []byte("\r"), nil))
	if got := hex.EncodeToString(sum[:]); got != lightconev1.ProtoSHA256 {
		t.Fatalf("%s has SHA-256 %s, but lightconev1 was generated from %s: run proto/gen.sh",
			filepath.Base(protoFile), got, lightconev1.ProtoSHA256)
	}
}

// TestGeneratedCodeFresh regenerates the code into a temporary directory
// and compares it with the checked-in files, catching hand edits as well.
// It runs only where protoc and both plugins are installed at exactly the
// versions named in the checked-in files' headers; elsewhere it skips,
// and TestProtoHash still guards against a stale .proto.
func TestGeneratedCodeFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: runs protoc")
	}
	pbGo, err := os.ReadFile(filepath.Join(genDir, "lightcone.pb.go"))
	if err != nil {
		t.Fatal(err)
	}
	grpcGo, err := os.ReadFile(filepath.Join(genDir, "lightcone_grpc.pb.go"))
	if err != nil {
		t.Fatal(err)
	}
	// PATH as gen.sh sees it: it adds $(go env GOPATH)/bin.
	path := os.Getenv("PATH")
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		path = filepath.Join(strings.TrimSpace(string(out)), "bin") + string(os.PathListSeparator) + path
	}
	tools := []struct {
		name   string
		header []byte         // the checked-in file naming its version
		want   *regexp.Regexp // finds the version in that header
		got    *regexp.Regexp // finds the version in `name --version`
	}{
		{"protoc", pbGo, regexp.MustCompile(`(?m)^//\s+protoc\s+v(\S+)$`), regexp.MustCompile(`libprotoc (\S+)`)},
		{"protoc-gen-go", pbGo, regexp.MustCompile(`(?m)^//\s+protoc-gen-go\s+v(\S+)$`), regexp.MustCompile(`protoc-gen-go v(\S+)`)},
		{"protoc-gen-go-grpc", grpcGo, regexp.MustCompile(`(?m)^// - protoc-gen-go-grpc v(\S+)$`), regexp.MustCompile(`protoc-gen-go-grpc v?(\S+)`)},
	}
	for _, tool := range tools {
		want := tool.want.FindSubmatch(tool.header)
		if want == nil {
			t.Fatalf("the generated code's header names no %s version", tool.name)
		}
		bin := lookPath(tool.name, path)
		if bin == "" {
			t.Skipf("%s not installed; cannot regenerate to compare (see proto/gen.sh; TestProtoHash still checks the .proto)", tool.name)
		}
		out, err := exec.Command(bin, "--version").CombinedOutput()
		got := tool.got.FindSubmatch(out)
		if err != nil || got == nil {
			t.Skipf("%s --version: %v %q; cannot regenerate to compare", bin, err, out)
		}
		if !bytes.Equal(got[1], want[1]) {
			t.Skipf("%s is version %s; the checked-in code was generated with %s, so regenerated code would differ (see proto/gen.sh)",
				tool.name, got[1], want[1])
		}
	}

	tmp := t.TempDir()
	cmd := exec.Command("sh", genScript)
	cmd.Env = append(os.Environ(), "LIGHTCONE_PROTO_OUT="+tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("proto/gen.sh: %v\n%s", err, out)
	}
	for _, name := range generated {
		fresh, err := os.ReadFile(filepath.Join(tmp, "internal/api/grpcapi", genDir, name))
		if err != nil {
			t.Fatalf("read regenerated %s: %v", name, err)
		}
		old, err := os.ReadFile(filepath.Join(genDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fresh, old) {
			t.Errorf("lightconev1/%s differs from what proto/gen.sh generates: run proto/gen.sh", name)
		}
	}
}

// lookPath finds an executable named name in path, or returns "".
func lookPath(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
