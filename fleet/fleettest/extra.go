package fleettest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// StartTLS is Start for a server that speaks only TLS (rediss://), with a
// certificate for 127.0.0.1 signed by an authority made for the test,
// whose PEM file is CAFile. It does not ask clients for certificates.
func StartTLS(t testing.TB, args ...string) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("needs redis-server; skipped under -short")
	}
	s := &Server{t: t, port: FreePort(t), dir: t.TempDir(), args: args}
	pool := writeCerts(t, s.dir)
	s.caFile = filepath.Join(s.dir, "ca.pem")
	s.tls = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	s.start()
	t.Cleanup(s.Kill)
	return s
}

// writeCerts writes ca.pem, server.pem and server-key.pem in dir: an
// authority and a certificate it signed for 127.0.0.1, valid for a day.
func writeCerts(t testing.TB, dir string) *x509.CertPool {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fleettest CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{
		"ca.pem":         {Type: "CERTIFICATE", Bytes: caDER},
		"server.pem":     {Type: "CERTIFICATE", Bytes: der},
		"server-key.pem": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool
}

// MasterName is the name under which a Sentinel of StartSentinel knows
// its master.
const MasterName = "fleettest"

// StartSentinel starts a Sentinel (redis-server --sentinel, as Debian's
// redis-sentinel runs it) on a free loopback port, watching master under
// MasterName with a quorum of one, and waits until it names the master.
// Its Addr is the Sentinel's, for a URL such as
// "redis://"+sentinel.Addr()+"/0?master_name="+fleettest.MasterName+"&key=test".
func StartSentinel(t testing.TB, master *Server) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("needs redis-server; skipped under -short")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	host, port, _ := net.SplitHostPort(master.Addr())
	text := fmt.Sprintf("sentinel monitor %s %s %s 1\nsentinel down-after-milliseconds %s 1000\n", MasterName, host, port, MasterName)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("redis-server is not installed (scripts/test installs it: apt-get install redis-server redis-sentinel): %v", err)
	}
	s := &Server{t: t, port: FreePort(t), dir: dir, args: []string{conf}, sentinel: true}
	s.start()
	t.Cleanup(s.Kill)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := s.Query("SENTINEL", "get-master-addr-by-name", MasterName)
		if err == nil && got == "*2" {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Sentinel on %s does not name its master after 10s: %q, %v", s.Addr(), got, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Silent returns the address of a loopback port that accepts connections
// and never answers, as a server stuck before its first reply (or a
// firewall that drops the answers) would; it closes them when the test
// ends.
func Silent(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// ClosedAddr returns a loopback address where nothing listens: dialling it
// is refused at once.
func ClosedAddr(t testing.TB) string {
	return "127.0.0.1:" + strconv.Itoa(FreePort(t))
}
