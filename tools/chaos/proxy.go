package main

import (
	"io"
	"net"
	"sync"
	"time"
)

// network is the fault layer between the servers: a TCP proxy in front
// of each server's RPC port (which carries Raft and server-to-server
// RPC), each server advertising its proxy's address so that the others
// dial it through the proxy. A proxy learns which server dialed a
// connection from the kernel's socket tables, so it can cut the links
// between an isolated server and the rest in both directions, and delay
// a server's traffic. Connections from anything else (the node
// simulators, the harness) pass untouched.
type network struct {
	mu       sync.Mutex
	isolated map[string]bool
	delay    map[string]time.Duration
	// pids are the servers' current process IDs, to tell who dialed.
	pids map[string]int
}

func newNetwork() *network {
	return &network{isolated: map[string]bool{}, delay: map[string]time.Duration{}, pids: map[string]int{}}
}

// setPID records server name's process (after each start).
func (n *network) setPID(name string, pid int) {
	n.mu.Lock()
	n.pids[name] = pid
	n.mu.Unlock()
}

// isolate cuts server name off from the other servers; heal restores
// every link and removes every delay.
func (n *network) isolate(name string) {
	n.mu.Lock()
	n.isolated[name] = true
	n.mu.Unlock()
}

func (n *network) heal() {
	n.mu.Lock()
	n.isolated = map[string]bool{}
	n.delay = map[string]time.Duration{}
	n.mu.Unlock()
}

// slow adds d of latency to every chunk server name sends or receives.
func (n *network) slow(name string, d time.Duration) {
	n.mu.Lock()
	n.delay[name] = d
	n.mu.Unlock()
}

// cut reports whether traffic between servers a and b is dropped: one
// is isolated and the other is not. An unknown dialer ("") is never cut.
func (n *network) cut(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.isolated[a] != n.isolated[b]
}

func (n *network) latency(a, b string) time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	return max(n.delay[a], n.delay[b])
}

// owner names the server that dialed from local port from to port to.
func (n *network) owner(from, to int) string {
	inode := socketInode(from, to)
	if inode == 0 {
		return ""
	}
	n.mu.Lock()
	pids := make(map[string]int, len(n.pids))
	for k, v := range n.pids {
		pids[k] = v
	}
	n.mu.Unlock()
	for name, pid := range pids {
		if ownsSocket(pid, inode) {
			return name
		}
	}
	return ""
}

// proxy forwards one listening port to one server's RPC port.
type proxy struct {
	net    *network
	server string
	target string
	ln     net.Listener
}

// listenProxy starts a proxy for server on a free loopback port.
func listenProxy(nw *network, server, target string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{net: nw, server: server, target: target, ln: ln}
	go p.serve()
	return p, nil
}

func (p *proxy) addr() string { return p.ln.Addr().String() }
func (p *proxy) close()       { p.ln.Close() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

// handle identifies the dialer and pumps both directions.
func (p *proxy) handle(c net.Conn) {
	from := c.RemoteAddr().(*net.TCPAddr).Port
	to := p.ln.Addr().(*net.TCPAddr).Port
	src := p.net.owner(from, to)
	u, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			c.Close()
			u.Close()
		})
	}
	go p.pump(u, c, src, closeBoth)
	p.pump(c, u, src, closeBoth)
}

// pump copies from r to w. A chunk read while the link is cut is
// dropped, and the link is then held silent until the cut heals and
// closed: the stream lost bytes, so neither end may use it again, and
// both see what a partition looks like, a peer that stops answering.
func (p *proxy) pump(w io.Writer, r io.Reader, src string, closeBoth func()) {
	defer closeBoth()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if p.net.cut(src, p.server) {
				for p.net.cut(src, p.server) {
					time.Sleep(50 * time.Millisecond)
				}
				return
			}
			if d := p.net.latency(src, p.server); d > 0 {
				time.Sleep(d)
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
