// Package certgen creates the certificates of the control plane's mutual TLS: a
// certificate authority, a daemon's certificate and client certificates. It serves
// `adapterctl certs` (certificates for trying remote access out) and the tests,
// which make expired, not-yet-valid and foreign certificates with it. Keys are
// ECDSA P-256.
//
// It is in the module's shared layer (internal/) and imports no package of the module:
// adapterctl and controlplane's tests both use it, and the top-level internal/ is the
// only place both may import.
package certgen

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Authority is a certificate authority able to issue certificates.
type Authority struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// Issued is one certificate and its key.
type Issued struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// Spec describes a certificate to issue.
type Spec struct {
	// CommonName is the subject common name (a client's identity in --allow).
	CommonName string
	// Server makes a daemon certificate valid for Hosts (IP addresses or DNS
	// names); otherwise the certificate is a client certificate.
	Server bool
	Hosts  []string
	// NotBefore and NotAfter bound its validity; zero values mean from an hour ago
	// and until Valid (0: DefaultValid) from now.
	NotBefore, NotAfter time.Time
	Valid               time.Duration
	// ExtraNames are subject attributes, each in its own RDN; a common name among
	// them replaces CommonName (the tests make certificates with two common names
	// with it).
	ExtraNames []pkix.AttributeTypeAndValue
}

// DefaultValid is how long a certificate is valid when Spec gives no bound.
const DefaultValid = 90 * 24 * time.Hour

// NewCA creates a self-signed certificate authority valid for valid (0: DefaultValid).
func NewCA(commonName string, valid time.Duration) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	nb, na := bounds(time.Time{}, time.Time{}, valid)
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: commonName},
		NotBefore: nb, NotAfter: na, IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	cert, err := create(tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return &Authority{Cert: cert, Key: key}, nil
}

// Issue creates a certificate signed by the authority.
func (a *Authority) Issue(s Spec) (*Issued, error) {
	if s.Server && len(s.Hosts) == 0 {
		return nil, errors.New("certgen: a server certificate needs at least one host")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	nb, na := bounds(s.NotBefore, s.NotAfter, s.Valid)
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: s.CommonName, ExtraNames: s.ExtraNames},
		NotBefore: nb, NotAfter: na, KeyUsage: x509.KeyUsageDigitalSignature, BasicConstraintsValid: true}
	if s.Server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		for _, h := range s.Hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	cert, err := create(tmpl, a.Cert, &key.PublicKey, a.Key)
	if err != nil {
		return nil, err
	}
	return &Issued{Cert: cert, Key: key}, nil
}

// bounds fills in the validity: from an hour ago (allowing for clock skew) unless
// nb is given, until valid (0: DefaultValid) from now unless na is given.
func bounds(nb, na time.Time, valid time.Duration) (time.Time, time.Time) {
	now := time.Now()
	if nb.IsZero() {
		nb = now.Add(-time.Hour)
	}
	if valid <= 0 {
		valid = DefaultValid
	}
	if na.IsZero() {
		na = now.Add(valid)
	}
	return nb, na
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}

func create(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, priv *ecdsa.PrivateKey) (*x509.Certificate, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, priv)
	if err != nil {
		return nil, fmt.Errorf("certgen: %w", err)
	}
	return x509.ParseCertificate(der)
}

// CertPEM returns the PEM encoding of a certificate.
func CertPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// KeyPEM returns the PKCS #8 PEM encoding of a private key.
func KeyPEM(k *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		panic(err) // a P-256 key always marshals
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}
