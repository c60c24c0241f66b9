package certgen

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

const (
	pemCertificate = "CERTIFICATE"
	pemECKey       = "EC PRIVATE KEY"
	pemPKCS8Key    = "PRIVATE KEY"
)

// encodePair PEM-encodes a DER certificate and its ECDSA key (SEC 1, the
// "EC PRIVATE KEY" block Nomad writes).
func encodePair(der []byte, key *ecdsa.PrivateKey) (PEMPair, error) {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return PEMPair{}, fmt.Errorf("encoding private key: %w", err)
	}
	return PEMPair{
		Cert: pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: der}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: pemECKey, Bytes: keyDER}),
	}, nil
}

// ParseCertificate reads the first certificate of a PEM file.
func ParseCertificate(data []byte) (*x509.Certificate, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errors.New("no PEM certificate found")
		}
		if block.Type == pemCertificate {
			return x509.ParseCertificate(block.Bytes)
		}
	}
}

// parseSigner reads a PEM private key that can sign: SEC 1 EC keys as
// written here, or PKCS #8 keys of any kind, for a CA made by other tools.
func parseSigner(data []byte) (crypto.Signer, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errors.New("no PEM private key found")
		}
		switch block.Type {
		case pemECKey:
			return x509.ParseECPrivateKey(block.Bytes)
		case pemPKCS8Key:
			k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if err != nil {
				return nil, err
			}
			s, ok := k.(crypto.Signer)
			if !ok {
				return nil, fmt.Errorf("private key of type %T cannot sign", k)
			}
			return s, nil
		case "RSA PRIVATE KEY":
			return x509.ParsePKCS1PrivateKey(block.Bytes)
		}
	}
}
