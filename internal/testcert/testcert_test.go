package testcert

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
)

// TestWrite checks that the files make a server that a client trusting
// only the authority accepts for 127.0.0.1, and that only their owner can
// read them.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	var chowned []string
	ca, err := Write(dir, "testcert CA", func(p string) error { chowned = append(chowned, filepath.Base(p)); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(chowned) != 3 {
		t.Errorf("chown called on %v, want the 3 files", chowned)
	}
	for _, f := range []string{CAFile, CertFile, KeyFile} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	defer func() { l.Close(); <-done }()
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	c, err := tls.Dial("tcp", l.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("a client trusting only the authority: %v", err)
	}
	c.Close()
	if _, err := tls.Dial("tcp", l.Addr().String(), &tls.Config{ServerName: "127.0.0.1"}); err == nil {
		t.Errorf("a client trusting the system's roots accepted the test server")
	}
}
