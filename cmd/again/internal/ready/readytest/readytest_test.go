package readytest_test

import (
	"net"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/ready/readytest"
)

// TestStart starts and stops every server, so that a broken installation
// shows here, named, rather than as a check's failure.
func TestStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers; skipped under -short")
	}
	for name, start := range map[string]func() (*readytest.Server, error){
		"postgres": readytest.StartPostgres,
		"mariadb":  readytest.StartMariaDB,
		"nats":     readytest.StartNATS,
		"rabbitmq": func() (*readytest.Server, error) {
			return readytest.StartRabbitMQ(func(addr string) error {
				c, err := net.DialTimeout("tcp", addr, time.Second)
				if err == nil {
					c.Close()
				}
				return err
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			begin := time.Now()
			s, err := start()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s up on %s in %v", name, s.Addr, time.Since(begin).Round(time.Millisecond))
			s.Stop()
			if c, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
				c.Close()
				t.Errorf("%s still accepts on %s after Stop", name, s.Addr)
			}
		})
	}
}
