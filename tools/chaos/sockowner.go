package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// socketInode finds, in the kernel's TCP tables, the socket whose local
// port is from and whose remote port is to (the dialing end of a
// loopback connection) and returns its inode, 0 when none is listed.
func socketInode(from, to int) uint64 {
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		buf, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		if inode := findInode(string(buf), from, to); inode != 0 {
			return inode
		}
	}
	return 0
}

// findInode scans one /proc/net/tcp table. Lines are
// "sl local_address rem_address st ... uid timeout inode ...", each
// address "HEXADDR:HEXPORT".
func findInode(table string, from, to int) uint64 {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || hexPort(f[1]) != from || hexPort(f[2]) != to {
			continue
		}
		if inode, err := strconv.ParseUint(f[9], 10, 64); err == nil && inode != 0 {
			return inode
		}
	}
	return 0
}

// hexPort reads the port of "0100007F:1F90"; -1 when malformed.
func hexPort(addr string) int {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return -1
	}
	p, err := strconv.ParseUint(addr[i+1:], 16, 16)
	if err != nil {
		return -1
	}
	return int(p)
}

// ownsSocket reports whether process pid holds the socket inode.
func ownsSocket(pid int, inode uint64) bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	want := fmt.Sprintf("socket:[%d]", inode)
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && target == want {
			return true
		}
	}
	return false
}
