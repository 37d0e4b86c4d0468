// Package chaos is what the fault, leader and soak tests and the bench share:
// a fault-injecting TCP proxy for the API server, the operator as a process
// that can be killed, the API server's audit log read as writes per user,
// and a convergence check that compares every CR's live objects with its
// release.
package chaos

import (
	"io"
	"net"
	"sync"
	"time"
)

// Proxy forwards TCP connections on a loopback port to an upstream address
// (the API server), and injects faults: Drop cuts every connection and
// refuses new ones for a while; SetDelay holds every chunk the upstream
// sends for a fixed time, a latency on every response that does not limit
// throughput.
type Proxy struct {
	ln       net.Listener
	upstream string

	mu        sync.Mutex
	conns     map[net.Conn]struct{}
	downUntil time.Time
	delay     time.Duration
	wg        sync.WaitGroup
}

// NewProxy listens on 127.0.0.1 and forwards to upstream ("host:port").
func NewProxy(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the proxy's "host:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Drop cuts every open connection, and those opened in the next d.
func (p *Proxy) Drop(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.downUntil = time.Now().Add(d)
	for c := range p.conns {
		_ = c.Close()
	}
}

// SetDelay holds each chunk from the upstream for d before passing it on (0:
// none). It applies to chunks read from then on.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// Close stops listening and cuts every connection.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.Drop(0)
	p.wg.Wait()
	return err
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := time.Now().Before(p.downUntil)
		if !down {
			p.conns[c] = struct{}{}
		}
		p.mu.Unlock()
		if down {
			_ = c.Close()
			continue
		}
		p.wg.Add(1)
		go p.forward(c)
	}
}

func (p *Proxy) forward(c net.Conn) {
	defer p.wg.Done()
	up, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		p.forget(c)
		return
	}
	p.mu.Lock()
	_, open := p.conns[c]
	if open {
		p.conns[up] = struct{}{}
	}
	p.mu.Unlock()
	if !open {
		_ = up.Close()
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { p.delayed(c, up); done <- struct{}{} }()
	<-done
	p.forget(c)
	p.forget(up)
	<-done
}

// delayed copies from src to dst, each chunk no earlier than the delay after
// it was read.
func (p *Proxy) delayed(dst io.Writer, src io.Reader) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	chunks := make(chan chunk, 1024)
	go func() {
		defer close(chunks)
		buf := make([]byte, 32*1024)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				p.mu.Lock()
				d := p.delay
				p.mu.Unlock()
				chunks <- chunk{b: append([]byte(nil), buf[:n]...), at: time.Now().Add(d)}
			}
			if err != nil {
				return
			}
		}
	}()
	for ch := range chunks {
		time.Sleep(time.Until(ch.at))
		if _, err := dst.Write(ch.b); err != nil {
			for range chunks { //nolint:revive // drain so the reader ends
			}
			return
		}
	}
}

func (p *Proxy) forget(c net.Conn) {
	_ = c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}
