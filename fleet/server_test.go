package fleet

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/again-go/again/fleet/fleettest"
	"github.com/redis/go-redis/v9"
)

// server is a real redis-server of the test's own (fleettest's), with
// the client helpers of these tests.
type server struct {
	*fleettest.Server
	t testing.TB
}

// startServer starts a real redis-server (Debian's package; scripts/test
// installs it). Tests that need one skip only under -short.
func startServer(t testing.TB, args ...string) *server {
	t.Helper()
	return &server{fleettest.Start(t, args...), t}
}

// client returns a client for the server, closed at the end of the test,
// with ContextTimeoutEnabled as NewBudget requires, and counting its round
// trips in rt if rt is not nil.
func (s *server) client(rt *atomic.Int64) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	if rt != nil {
		c.AddHook(countHook{rt})
	}
	s.t.Cleanup(func() { c.Close() })
	return c
}

// countHook counts the commands sent, one round trip each.
type countHook struct{ n *atomic.Int64 }

func (h countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}
func (h countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

// proxy is a loopback TCP proxy in front of a server that delays every
// answer by a delay the test can change at any time.
type proxy struct {
	l       net.Listener
	backend string
	delay   atomic.Int64 // nanoseconds
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   []net.Conn
}

func startProxy(t testing.TB, backend string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, backend: backend, conns: []net.Conn{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) Addr() string { return p.l.Addr().String() }

func (p *proxy) setDelay(d time.Duration) { p.delay.Store(int64(d)) }

func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		return false
	}
	p.conns = append(p.conns, c)
	return true
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		b, err := net.Dial("tcp", p.backend)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c) || !p.track(b) {
			c.Close()
			b.Close()
			return
		}
		p.wg.Add(2)
		go func() { // client to server, at once
			defer p.wg.Done()
			io.Copy(b, c)
			b.Close()
		}()
		go func() { // server to client, each chunk delayed
			defer p.wg.Done()
			defer c.Close()
			buf := make([]byte, 32<<10)
			for {
				n, err := b.Read(buf)
				if n > 0 {
					time.Sleep(time.Duration(p.delay.Load()))
					if _, werr := c.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

func (p *proxy) close() {
	p.l.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}

// logBuffer collects log lines from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Reset()
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, nil))
}

// eventually polls cond until it holds or 10 s pass: for what a real
// server and a real flushing goroutine do in their own time.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s, still not %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
