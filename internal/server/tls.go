package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLSFiles names PEM files for a TLS endpoint.
type TLSFiles struct {
	CertFile string `yaml:"cert_file"` // this node's certificate (chain)
	KeyFile  string `yaml:"key_file"`  // its private key
	// CAFile is the CA bundle that verifies the other side: for client_tls,
	// clients must then present a certificate it signed (mutual TLS); for
	// peer_tls it is required, and verifies peers both ways.
	CAFile string `yaml:"ca_file"`
}

func (f *TLSFiles) load(what string) (tls.Certificate, *x509.CertPool, error) {
	if f.CertFile == "" || f.KeyFile == "" {
		return tls.Certificate{}, nil, fmt.Errorf("%s: cert_file and key_file are both required", what)
	}
	cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("%s: %w", what, err)
	}
	if f.CAFile == "" {
		return cert, nil, nil
	}
	pem, err := os.ReadFile(f.CAFile)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("%s: ca_file: %w", what, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return tls.Certificate{}, nil, fmt.Errorf("%s: ca_file %s holds no PEM certificate", what, f.CAFile)
	}
	return cert, pool, nil
}

// clientTLS is the config of the client-facing listeners (RESP, HTTP).
func (f *TLSFiles) clientTLS() (*tls.Config, error) {
	if f == nil {
		return nil, nil
	}
	cert, pool, err := f.load("client_tls")
	if err != nil {
		return nil, err
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if pool != nil {
		c.ClientCAs, c.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return c, nil
}

// peerTLS is the mutual-TLS config between nodes: each side presents its
// certificate and verifies the other's against the cluster CA.
func (f *TLSFiles) peerTLS() (*tls.Config, error) {
	if f == nil {
		return nil, nil
	}
	if f.CAFile == "" {
		return nil, errors.New("peer_tls: ca_file is required (nodes verify each other)")
	}
	cert, pool, err := f.load("peer_tls")
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS13,
	}, nil
}
