// Package certgen makes the certificates of a Nomad cluster's TLS: a
// self-signed agent CA, and server, client and CLI certificates signed by
// it, named as Nomad names them (CN "server.<region>.<domain>").
//
// Keys are ECDSA P-256, as Nomad's are, and everything is built with the
// standard library's crypto/x509: a CA and a leaf need nothing more. The
// output is PEM, ready to write to the files `nomad tls` creates, and the
// package is kept free of file and flag handling so that tests anywhere in
// the tree can mint a CA and certificates in memory.
package certgen
