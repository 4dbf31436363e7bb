package controlplane

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// minicp's own certificate authority, in <data-dir>/pki, as kubeadm keeps
// a cluster's in /etc/kubernetes/pki: the CA signs the apiserver's serving
// certificate, and the kubeconfig carries the CA so that clients check
// they reach this apiserver. Both are made on first start and kept; the
// serving certificate is made again (by the same CA, so kubeconfigs stay
// valid) when it does not name the bind address or is about to expire.
const (
	PKIDir        = "pki"
	CACertFile    = "ca.crt"
	caKeyFile     = "ca.key"
	servingCert   = "apiserver.crt"
	servingKey    = "apiserver.key"
	caValidity    = 10 * 365 * 24 * time.Hour
	certValidity  = 365 * 24 * time.Hour
	renewBefore   = 30 * 24 * time.Hour
	pkiCommonName = "minicp-ca"
)

// pki is the CA certificate (PEM, for the kubeconfig) and the serving
// certificate and key files handed to the apiserver.
type pki struct {
	caPEM             []byte
	certFile, keyFile string
}

// ensurePKI returns the CA and a serving certificate for bindAddress,
// making what is missing or stale in dir.
func ensurePKI(dir, bindAddress string, now time.Time) (pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return pki{}, fmt.Errorf("creating %s: %w", dir, err)
	}
	caCert, caKey, caPEM, err := loadOrCreateCA(dir, now)
	if err != nil {
		return pki{}, err
	}
	p := pki{caPEM: caPEM, certFile: filepath.Join(dir, servingCert), keyFile: filepath.Join(dir, servingKey)}
	ips, names := servingNames(bindAddress)
	if servingCertValid(p.certFile, p.keyFile, caCert, ips, now) {
		return p, nil
	}
	return p, writeServingCert(p, caCert, caKey, ips, names, now)
}

// servingNames are the addresses and names the serving certificate is for:
// loopback, localhost, the machine's name, and the bind address (every
// address of the machine when it is 0.0.0.0 or ::).
func servingNames(bindAddress string) ([]net.IP, []string) {
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	names := []string{"localhost"}
	if host, err := os.Hostname(); err == nil && host != "" && host != "localhost" {
		names = append(names, host)
	}
	bind := net.ParseIP(bindAddress)
	switch {
	case bind == nil || bind.IsLoopback():
	case bind.IsUnspecified():
		addrs, _ := net.InterfaceAddrs() // no interfaces listed: loopback only
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() {
				ips = append(ips, n.IP)
			}
		}
	default:
		ips = append(ips, bind)
	}
	return ips, names
}

func loadOrCreateCA(dir string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, []byte, error) {
	certPath, keyPath := filepath.Join(dir, CACertFile), filepath.Join(dir, caKeyFile)
	if pair, err := tls.LoadX509KeyPair(certPath, keyPath); err == nil {
		caPEM, err := os.ReadFile(certPath)
		key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
		if err == nil && ok {
			cert, err := x509.ParseCertificate(pair.Certificate[0])
			if err == nil {
				return cert, key, caPEM, nil
			}
		}
		return nil, nil, nil, fmt.Errorf("the CA in %s cannot be used: delete %s to make a new one (kubeconfigs copied elsewhere then need replacing)", dir, dir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil, fmt.Errorf("reading the CA in %s: %w", dir, err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serialNumber(),
		Subject:               pkix.Name{CommonName: pkiCommonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := writeKeyPair(certPath, keyPath, caPEM, key); err != nil {
		return nil, nil, nil, err
	}
	return cert, key, caPEM, nil
}

// servingCertValid reports whether the serving certificate on disk is
// signed by ca, names every address in ips and is not about to expire.
func servingCertValid(certFile, keyFile string, ca *x509.Certificate, ips []net.IP, now time.Time) bool {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return false
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil || cert.CheckSignatureFrom(ca) != nil || now.Add(renewBefore).After(cert.NotAfter) {
		return false
	}
	for _, ip := range ips {
		if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
			return false
		}
	}
	return true
}

func writeServingCert(p pki, ca *x509.Certificate, caKey *ecdsa.PrivateKey, ips []net.IP, names []string, now time.Time) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serialNumber(),
		Subject:      pkix.Name{CommonName: "minicp-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  ips,
		DNSNames:     names,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	return writeKeyPair(p.certFile, p.keyFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key)
}

// writeKeyPair writes a certificate and its key (0600), each to a
// temporary file renamed into place.
func writeKeyPair(certPath, keyPath string, certPEM []byte, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	for path, data := range map[string][]byte{keyPath: keyPEM, certPath: certPEM} {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	}
	return nil
}

func serialNumber() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)) // crypto/rand does not fail
	return n
}

// givenCertRoot returns, for a serving certificate given with
// --tls-cert-file, the certificate the kubeconfig carries as its CA: the
// file's last certificate when it is self-signed (a chain that ends with
// its root, or a self-signed certificate), nil otherwise, when clients
// check the server against the system's roots.
func givenCertRoot(certFile string) ([]byte, error) {
	data, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("reading --tls-cert-file: %w", err)
	}
	var last *pem.Block
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type == "CERTIFICATE" {
			last = block
		}
	}
	if last == nil {
		return nil, fmt.Errorf("--tls-cert-file %s holds no PEM certificate", certFile)
	}
	cert, err := x509.ParseCertificate(last.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing --tls-cert-file %s: %w", certFile, err)
	}
	selfSigned := bytes.Equal(cert.RawIssuer, cert.RawSubject) &&
		cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature) == nil
	if !selfSigned {
		return nil, nil
	}
	return pem.EncodeToMemory(last), nil
}
