package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/transport"
	"github.com/lightcone/lightcone/internal/wire"
)

// TLSFiles names PEM files for a TLS endpoint. In each path, {node} stands
// for the node's name, so one cluster file serves every node
// (cert_file: certs/{node}.pem).
type TLSFiles struct {
	CertFile string `yaml:"cert_file"` // this node's certificate (chain)
	KeyFile  string `yaml:"key_file"`  // its private key
	// CAFile is the CA bundle that verifies the other side: for client_tls,
	// clients must then present a certificate it signed (mutual TLS); for
	// peer_tls it is required, and verifies peers both ways.
	CAFile string `yaml:"ca_file"`
}

func (f *TLSFiles) load(what, node string) (tls.Certificate, *x509.CertPool, error) {
	if f.CertFile == "" || f.KeyFile == "" {
		return tls.Certificate{}, nil, fmt.Errorf("%s: cert_file and key_file are both required", what)
	}
	path := func(p string) string { return strings.ReplaceAll(p, "{node}", node) }
	cert, err := tls.LoadX509KeyPair(path(f.CertFile), path(f.KeyFile))
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("%s: %w", what, err)
	}
	if f.CAFile == "" {
		return cert, nil, nil
	}
	pem, err := os.ReadFile(path(f.CAFile))
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("%s: ca_file: %w", what, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return tls.Certificate{}, nil, fmt.Errorf("%s: ca_file %s holds no PEM certificate", what, path(f.CAFile))
	}
	return cert, pool, nil
}

// clientTLS is the config of the client-facing listeners (RESP, HTTP) of
// node.
func (f *TLSFiles) clientTLS(node string) (*tls.Config, error) {
	if f == nil {
		return nil, nil
	}
	cert, pool, err := f.load("client_tls", node)
	if err != nil {
		return nil, err
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if pool != nil {
		c.ClientCAs, c.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return c, nil
}

// peerTLS is the mutual-TLS config between nodes, for node: each side
// presents its certificate and verifies the other's against the cluster
// CA, and the transport checks that it names the node it is
// (transport.NodeURI, a URI SAN lightcone://node/NAME). node's own
// certificate must name it, so a misissued one stops the node at start
// rather than at every peer.
func (f *TLSFiles) peerTLS(node string) (*tls.Config, error) {
	if f == nil {
		return nil, nil
	}
	if f.CAFile == "" {
		return nil, errors.New("peer_tls: ca_file is required (nodes verify each other)")
	}
	cert, pool, err := f.load("peer_tls", node)
	if err != nil {
		return nil, err
	}
	leaf := cert.Leaf
	if leaf == nil { // GODEBUG=x509keypairleaf=0
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, fmt.Errorf("peer_tls: %w", err)
		}
	}
	var uris []string
	for _, u := range leaf.URIs {
		uris = append(uris, u.String())
	}
	if want := transport.NodeURI(node); !slices.Contains(uris, want) {
		return nil, fmt.Errorf("peer_tls: the certificate in %s does not name node %q: it needs the URI SAN %s (it has %v); peers refuse a certificate that does not name the node it belongs to",
			strings.ReplaceAll(f.CertFile, "{node}", node), node, want, uris)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS13,
	}, nil
}

// nodeNames maps every node of tp to its name (transport.Config.Names).
func nodeNames(tp *topo.Topology) map[wire.NodeID]string {
	names := make(map[wire.NodeID]string, len(tp.Nodes))
	for _, n := range tp.Nodes {
		names[n.ID] = n.Name
	}
	return names
}
