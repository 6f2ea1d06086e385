package server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lightcone/lightcone/internal/transport/tlstest"
)

type testPKI struct {
	dir      string
	caPool   *x509.CertPool
	clientKP tls.Certificate
}

// newPKI makes a CA (ca.pem) and, signed by it, a certificate for
// 127.0.0.1 for each of nodes (NAME.pem and NAME-key.pem, naming the node
// by the URI SAN lightcone://node/NAME) and a client certificate.
func newPKI(t *testing.T, nodes ...string) *testPKI {
	dir := t.TempDir()
	ca := tlstest.NewCA(t)
	ca.WriteCA(t, filepath.Join(dir, "ca.pem"))
	for _, n := range nodes {
		tlstest.Write(t, dir, n, ca.Peer(t, n, "lightcone://node/"+n))
	}
	return &testPKI{dir: dir, caPool: ca.Pool, clientKP: ca.Issue(t, "client", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})}
}

// TestMutualTLSCluster: three processes, each with its own certificate
// naming it (one cluster file: {node} in the paths), talk to each other
// over mutual TLS and serve RESP and HTTP over mutual TLS; plaintext
// clients get nothing.
func TestMutualTLSCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test; skipped in -short")
	}
	pki := newPKI(t, "a-0", "b-0", "c-0")
	bin := buildBinary(t)
	dir := t.TempDir()
	addrs := map[string][3]string{}
	var b strings.Builder
	b.WriteString("cluster:\n  name: tls\n  world: local3\n  nodes:\n")
	for _, n := range []string{"a-0", "b-0", "c-0"} {
		a := [3]string{freeAddr(t), freeAddr(t), freeAddr(t)}
		addrs[n] = a
		fmt.Fprintf(&b, "    %s: {peer: %q, resp: %q, http: %q}\n", n, a[0], a[1], a[2])
	}
	f := func(n string) string { return filepath.Join(pki.dir, n) }
	fmt.Fprintf(&b, "peer_tls: {cert_file: %q, key_file: %q, ca_file: %q}\n", f("{node}.pem"), f("{node}-key.pem"), f("ca.pem"))
	fmt.Fprintf(&b, "client_tls: {cert_file: %q, key_file: %q, ca_file: %q}\n", f("{node}.pem"), f("{node}-key.pem"), f("ca.pem"))
	cfgPath := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cfgPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	clientTLS := &tls.Config{RootCAs: pki.caPool, Certificates: []tls.Certificate{pki.clientKP}}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS}, Timeout: 2 * time.Second}
	for n, a := range addrs {
		cmd := exec.Command(bin, "server", "--config", cfgPath, "--node", n, "--data-dir", filepath.Join(dir, n), "--grpc-addr", "off")
		var log strings.Builder
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		deadline := time.Now().Add(20 * time.Second)
		for {
			res, err := hc.Get("https://" + a[2] + "/readyz")
			if err == nil {
				res.Body.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not ready over TLS: %v\n%s", n, err, log.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addrs["a-0"][1], Protocol: 2, TLSConfig: clientTLS, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := c.Do(ctx, "LC.SET", "k", "v", "LEVEL", "ALL").Err()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ALL write over mutual-TLS peers never succeeded: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c2 := redis.NewClient(&redis.Options{Addr: addrs["c-0"][1], Protocol: 2, TLSConfig: clientTLS})
	defer c2.Close()
	if v, err := c2.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("GET k at c-0 = %q, %v; want v", v, err)
	}
	// Plaintext, or TLS without a client certificate, is refused.
	plain := redis.NewClient(&redis.Options{Addr: addrs["a-0"][1], Protocol: 2, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer plain.Close()
	if err := plain.Ping(ctx).Err(); err == nil {
		t.Error("plaintext PING to a TLS listener succeeded")
	}
	noCert := redis.NewClient(&redis.Options{Addr: addrs["a-0"][1], Protocol: 2, MaxRetries: -1, TLSConfig: &tls.Config{RootCAs: pki.caPool}})
	defer noCert.Close()
	if err := noCert.Ping(ctx).Err(); err == nil {
		t.Error("PING without a client certificate succeeded under mutual TLS")
	}
}

// TestPeerTLSCertificateMustNameTheNode: a node given another node's
// certificate (signed by the cluster CA) refuses to start, naming the SAN
// it needs; peers would refuse it anyway (internal/transport
// TestTLSPeerWithAnotherNodesCertificateIsRefused).
func TestPeerTLSCertificateMustNameTheNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the server binary; skipped in -short")
	}
	pki := newPKI(t, "a-0", "b-0")
	bin := buildBinary(t)
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("cluster:\n  name: tls\n  world: local3\n  nodes:\n")
	for _, n := range []string{"a-0", "b-0", "c-0"} {
		fmt.Fprintf(&b, "    %s: {peer: %q, resp: %q, http: %q}\n", n, freeAddr(t), freeAddr(t), freeAddr(t))
	}
	f := func(n string) string { return filepath.Join(pki.dir, n) }
	fmt.Fprintf(&b, "peer_tls: {cert_file: %q, key_file: %q, ca_file: %q}\n", f("{node}.pem"), f("{node}-key.pem"), f("ca.pem"))
	cfgPath := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cfgPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "server", "--config", cfgPath, "--node", "a-0", "--data-dir", filepath.Join(dir, "a-0"), "--grpc-addr", "off",
		"--peer-tls-cert", f("b-0.pem"), "--peer-tls-key", f("b-0-key.pem"), "--peer-tls-ca", f("ca.pem"))
	out, err := cmd.CombinedOutput() // it exits at once: no wait to bound
	if err == nil {
		t.Fatalf("server a-0 with b-0's certificate started and exited cleanly; want a refusal\n%s", out)
	}
	if want := "does not name node \"a-0\": it needs the URI SAN lightcone://node/a-0"; !strings.Contains(string(out), want) {
		t.Fatalf("server a-0 with b-0's certificate: %v\n%s\nwant an error containing %q", err, out, want)
	}
}
