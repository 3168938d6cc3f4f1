package cmdutil

import (
	"crypto/x509"
	"errors"
	"os"
)

// CACertHelp is the help of the --cacert flag of fetch and wait.
const CACertHelp = "PEM file of the certificate authorities to trust instead of the system's"

// CACerts reads --cacert's file: the PEM certificates of the authorities
// to trust. An empty file name is no flag: nil, the system's roots. A
// file that cannot be read or holds no PEM certificate is a usage error
// naming it.
func CACerts(file string) (*x509.CertPool, error) {
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		if e := errors.Unwrap(err); e != nil {
			err = e
		}
		return nil, Usagef("--cacert: cannot read %q: %v", file, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, BadValue("--cacert", file, "a file of PEM certificates (it holds none)")
	}
	return pool, nil
}
