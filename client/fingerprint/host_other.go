//go:build !linux

package fingerprint

// kernelArch is unknown without uname(2) in the standard library.
func kernelArch() string { return "" }
