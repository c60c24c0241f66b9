package main

import (
	"bufio"
	"net"
	"os"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func writeFile(path string) error { return os.WriteFile(path, nil, 0o700) }

func TestFindInode(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0000000000000000 100 0 0 10 0
   1: 0100007F:A000 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 222 1 0000000000000000 20 4 30 10 -1
`
	must.Eq(t, uint64(222), findInode(table, 0xA000, 0x1F90))
	must.Eq(t, uint64(0), findInode(table, 0x1F90, 0xA000))
	must.Eq(t, -1, hexPort("garbage"))
}

// echoServer answers each line with the same line.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					c.Write([]byte(line))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends a line through addr and reports whether it came back
// within wait.
func roundTrip(t *testing.T, addr string, wait time.Duration) bool {
	c, err := net.Dial("tcp", addr)
	must.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("ping\n"))
	must.NoError(t, err)
	c.SetReadDeadline(time.Now().Add(wait))
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "ping\n"
}

// The proxy knows this test process as server "a" (by its PID, through
// the kernel's socket tables) and fronts server "b": isolating either
// cuts the link, both or neither leaves it, a delay slows it, and a
// dialer it does not know is never cut.
func TestProxyPartition(t *testing.T) {
	nw := newNetwork()
	nw.setPID("a", os.Getpid())
	p, err := listenProxy(nw, "b", echoServer(t))
	must.NoError(t, err)
	defer p.close()

	must.True(t, roundTrip(t, p.addr(), 2*time.Second))

	nw.isolate("a")
	must.False(t, roundTrip(t, p.addr(), 300*time.Millisecond))
	nw.heal()
	must.True(t, roundTrip(t, p.addr(), 2*time.Second))

	nw.isolate("b")
	must.False(t, roundTrip(t, p.addr(), 300*time.Millisecond))
	nw.isolate("a") // both on the same side
	must.True(t, roundTrip(t, p.addr(), 2*time.Second))
	nw.heal()

	nw.slow("b", 200*time.Millisecond)
	start := time.Now()
	must.True(t, roundTrip(t, p.addr(), 2*time.Second))
	must.GreaterEq(t, 400*time.Millisecond, time.Since(start)) // both directions delayed
	nw.heal()

	// An unknown dialer (here: not the PID recorded) passes a cut.
	nw.setPID("a", 1)
	nw.isolate("b")
	must.True(t, roundTrip(t, p.addr(), 2*time.Second))
}

// A link already open when the cut starts goes silent and is closed
// when the cut heals.
func TestProxyCutsOpenLinks(t *testing.T) {
	nw := newNetwork()
	nw.setPID("a", os.Getpid())
	p, err := listenProxy(nw, "b", echoServer(t))
	must.NoError(t, err)
	defer p.close()
	c, err := net.Dial("tcp", p.addr())
	must.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	c.Write([]byte("one\n"))
	line, err := r.ReadString('\n')
	must.NoError(t, err)
	must.Eq(t, "one\n", line)

	nw.isolate("b")
	c.Write([]byte("two\n"))
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	_, err = r.ReadString('\n')
	must.Error(t, err)
	nw.heal()
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err = r.ReadString('\n')
	must.Error(t, err) // closed, not resumed with a byte missing
}
