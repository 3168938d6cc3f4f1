package readytest

import (
	"net"
	"sync"
	"testing"
)

// Silent listens on a loopback port (or a Unix socket) and accepts every
// connection without ever answering or closing it: a server that hangs,
// or a port of a protocol that waits for the client to speak first. It
// returns the address; the listener and connections close when the test
// ends.
func Silent(t testing.TB, network, addr string) string {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}
