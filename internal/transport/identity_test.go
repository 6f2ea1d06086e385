package transport

import (
	"bytes"
	"crypto/tls"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/lightcone/lightcone/internal/transport/tlstest"
	"github.com/lightcone/lightcone/internal/wire"
)

// peerTLS is the mutual-TLS config of a node presenting a certificate
// that names node name.
func peerTLS(t *testing.T, ca *tlstest.CA, name string) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{ca.Peer(t, name, NodeURI(name))},
		RootCAs: ca.Pool, ClientCAs: ca.Pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13}
}

// logBuf is a log both a test and a transport's goroutines use.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// tlsPair is nodes 0 (n0) and 1 (n1) over mutual TLS, node 1 presenting a
// certificate that names cert1.
func tlsPair(t *testing.T, cert1 string) (a, b *Transport, inA, inB *inbox, logA *logBuf) {
	ca := tlstest.NewCA(t)
	addrs := freeAddrs(t, 2)
	peers := map[wire.NodeID]string{0: addrs[0], 1: addrs[1]}
	names := map[wire.NodeID]string{0: "n0", 1: "n1"}
	inA, inB, logA = &inbox{}, &inbox{}, &logBuf{}
	a, err := New(Config{Self: 0, Cluster: "c", Listen: addrs[0], Peers: peers, Names: names, Codec: testCodec(t), Deliver: inA.deliver,
		TLS: peerTLS(t, ca, "n0"), Log: slog.New(slog.NewTextHandler(logA, nil))})
	if err != nil {
		t.Fatal(err)
	}
	b, err = New(Config{Self: 1, Cluster: "c", Listen: addrs[1], Peers: peers, Names: names, Codec: testCodec(t), Deliver: inB.deliver,
		TLS: peerTLS(t, ca, cert1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b, inA, inB, logA
}

// TestTLSPeersNamedByTheirCertificates: nodes whose certificates name them
// talk both ways.
func TestTLSPeersNamedByTheirCertificates(t *testing.T) {
	a, b, inA, inB, _ := tlsPair(t, "n1")
	a.Send(1, &ping{N: 1})
	b.Send(0, &ping{N: 2})
	waitFor(t, "delivery both ways", func() bool { return inA.len() == 1 && inB.len() == 1 })
}

// TestTLSPeerWithAnotherNodesCertificateIsRefused: node 1 presents node
// n2's certificate, signed by the cluster CA. Node 0 refuses it both ways
// — dialing node 1, and node 1 dialing it claiming to be node 1 — and
// says why in its log; nothing is delivered either way.
func TestTLSPeerWithAnotherNodesCertificateIsRefused(t *testing.T) {
	a, b, inA, inB, logA := tlsPair(t, "n2")
	a.Send(1, &ping{N: 1})
	b.Send(0, &ping{N: 2})
	for _, want := range []string{"transport: refusing peer", "transport: refusing inbound peer"} {
		waitFor(t, "log "+want, func() bool { return strings.Contains(logA.String(), want) })
	}
	if log := logA.String(); !strings.Contains(log, "lightcone://node/n1") || !strings.Contains(log, "lightcone://node/n2") {
		t.Errorf("log does not name the SAN wanted and the one presented:\n%s", log)
	}
	if inA.len() != 0 || inB.len() != 0 {
		t.Fatalf("delivered %d to node 0 and %d to node 1 with node 1 presenting n2's certificate; want none", inA.len(), inB.len())
	}
}

// TestTLSNeedsNames: with TLS every peer must have a name to check.
func TestTLSNeedsNames(t *testing.T) {
	addrs := freeAddrs(t, 2)
	_, err := New(Config{Self: 0, Cluster: "c", Listen: addrs[0], Peers: map[wire.NodeID]string{0: addrs[0], 1: addrs[1]},
		Names: map[wire.NodeID]string{0: "n0"}, Codec: testCodec(t), Deliver: func(wire.NodeID, wire.Msg) {}, TLS: peerTLS(t, tlstest.NewCA(t), "n0")})
	if err == nil || !strings.Contains(err.Error(), "node name") {
		t.Fatalf("New with TLS and a peer without a name: %v; want an error", err)
	}
}
