// Package tlstest makes a throwaway certificate authority and
// certificates signed by it, for tests of TLS between nodes and clients.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority valid for the hour around its making.
type CA struct {
	Cert   *x509.Certificate
	Pool   *x509.CertPool // holds Cert
	key    *ecdsa.PrivateKey
	serial int64
}

// NewCA makes a CA.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "lightcone test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{Cert: cert, Pool: pool, key: key, serial: 1}
}

// Issue signs a certificate for 127.0.0.1 with common name cn, the given
// extended key usages and URI SANs.
func (ca *CA) Issue(t testing.TB, cn string, usage []x509.ExtKeyUsage, uris ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var us []*url.URL
	for _, s := range uris {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		us = append(us, u)
	}
	ca.serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(ca.serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, URIs: us, ExtKeyUsage: usage, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// Peer is a node's certificate: server and client use (nodes are both).
func (ca *CA) Peer(t testing.TB, cn string, uris ...string) tls.Certificate {
	return ca.Issue(t, cn, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, uris...)
}

// WriteCA writes the CA's certificate to path as PEM.
func (ca *CA) WriteCA(t testing.TB, path string) {
	t.Helper()
	write(t, path, "CERTIFICATE", ca.Cert.Raw)
}

// Write writes kp's certificate and key as PEM to dir/NAME.pem and
// dir/NAME-key.pem.
func Write(t testing.TB, dir, name string, kp tls.Certificate) {
	t.Helper()
	kder, err := x509.MarshalECPrivateKey(kp.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, name+".pem"), "CERTIFICATE", kp.Certificate[0])
	write(t, filepath.Join(dir, name+"-key.pem"), "EC PRIVATE KEY", kder)
}

func write(t testing.TB, path, typ string, der []byte) {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
