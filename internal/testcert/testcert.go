// Package testcert writes the certificates of a TLS server started by a
// test.
//
// They are an authority made at test time and a certificate it signed for
// 127.0.0.1. The package serves the test servers of two modules
// (fleet/fleettest's redis-server, the command's readytest databases and
// brokers), and is internal to this repository: nothing here is for a
// production server.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The files that Write puts in a directory.
const (
	CAFile   = "ca.pem"         // the authority's certificate
	CertFile = "server.pem"     // the server's certificate
	KeyFile  = "server-key.pem" // the server's key, PKCS #8
)

// Write writes CAFile, CertFile and KeyFile in dir, readable by the current
// user only: an authority named name, made now, and a certificate it
// signed for 127.0.0.1, both valid from an hour ago for a day. chown, if
// not nil, is called on each file once written (PostgreSQL refuses a key
// that another user owns). Write returns the authority's certificate.
//
// The key is PKCS #8, the one format that OpenSSL (redis-server,
// PostgreSQL, MariaDB) and Erlang (RabbitMQ) all read.
func Write(dir, name string, chown func(path string) error) (*x509.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	for file, block := range map[string]*pem.Block{
		CAFile:   {Type: "CERTIFICATE", Bytes: caDER},
		CertFile: {Type: "CERTIFICATE", Bytes: der},
		KeyFile:  {Type: "PRIVATE KEY", Bytes: keyDER},
	} {
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			return nil, err
		}
		if chown != nil {
			if err := chown(path); err != nil {
				return nil, err
			}
		}
	}
	return ca, nil
}
