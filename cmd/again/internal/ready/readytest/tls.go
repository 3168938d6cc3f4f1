package readytest

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/again-go/again/internal/testcert"
)

// Certificate files that writeCerts puts in a server's directory: an
// authority made at test time (CAFile) and a certificate it signed for
// 127.0.0.1 with its key.
const (
	caFile   = testcert.CAFile
	certFile = testcert.CertFile
	keyFile  = testcert.KeyFile
)

// WriteCerts writes in dir, readable by the current user only, an
// authority made now (ca.pem, whose path it returns) and a certificate it
// signed for 127.0.0.1 (server.pem, server-key.pem), valid for a day.
func WriteCerts(dir string) (string, error) { return writeCerts(dir, nil) }

// writeCerts writes caFile, certFile and keyFile in dir, owned by cred's
// user when not nil (PostgreSQL refuses a key that another user owns or
// that others can read), and returns the authority's path.
func writeCerts(dir string, cred *syscall.Credential) (string, error) {
	var chown func(string) error
	if cred != nil {
		chown = func(path string) error { return os.Chown(path, int(cred.Uid), int(cred.Gid)) }
	}
	if _, err := testcert.Write(dir, "readytest CA", chown); err != nil {
		return "", err
	}
	return filepath.Join(dir, caFile), nil
}
