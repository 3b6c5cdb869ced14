package certgen

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"
)

func TestIssue(t *testing.T) {
	ca, err := NewCA("ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Issue(Spec{CommonName: "d", Server: true, Hosts: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := ca.Issue(Spec{CommonName: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	if _, err := srv.Cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1"}); err != nil {
		t.Errorf("server certificate for 127.0.0.1: %v", err)
	}
	if _, err := srv.Cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "localhost"}); err != nil {
		t.Errorf("server certificate for localhost: %v", err)
	}
	if _, err := cli.Cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if _, err := cli.Cert.Verify(x509.VerifyOptions{Roots: roots}); err == nil {
		t.Error("a client certificate verifies as a server's")
	}
	if _, err := tls.X509KeyPair(CertPEM(cli.Cert), KeyPEM(cli.Key)); err != nil {
		t.Errorf("PEM pair: %v", err)
	}
	if _, err := ca.Issue(Spec{Server: true}); err == nil {
		t.Error("a server certificate without hosts was issued")
	}
	nb := time.Now().Add(-2 * time.Hour)
	old, err := ca.Issue(Spec{CommonName: "old", NotBefore: nb, NotAfter: nb.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if !old.Cert.NotAfter.Before(time.Now()) {
		t.Error("NotAfter not applied")
	}
}
