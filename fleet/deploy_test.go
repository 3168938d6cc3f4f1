package fleet

import (
	"strconv"
	"strings"
	"testing"

	"github.com/again-go/again/fleet/fleettest"
)

// TestTLS: a rediss:// URL with ca_file reaches a TLS-only server whose
// certificate that authority signed; without it, the server's certificate
// is not trusted, and the log says so.
func TestTLS(t *testing.T) {
	s := fleettest.StartTLS(t)
	b, err := OpenBudget(s.URL("key=tls&timeout=1s"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for range 3 {
		if !b.Failure() {
			t.Fatal("Failure() = false on a full bucket")
		}
	}
	if got, err := b.SharedTokens(t.Context()); got != 7 || err != nil || !b.Shared() {
		t.Errorf("over TLS: SharedTokens = %v, %v, Shared %v; want 7, shared", got, err, b.Shared())
	}

	// Timeouts far above the handshake's time, so that the certificate's
	// failure, not a decision's deadline on a loaded machine, ends it.
	var log logBuffer
	untrusted, err := OpenBudget("rediss://"+s.Addr()+"/0?key=tls&timeout=10s&connect_timeout=10s", log.logger())
	if err != nil {
		t.Fatal(err)
	}
	defer untrusted.Close()
	untrusted.Failure()
	if !strings.Contains(log.String(), lostLine+" (TLS failure)") {
		t.Errorf("without ca_file, log:\n%swant a TLS failure named", log.String())
	}
}

// TestSentinel: a URL with master_name reaches the master that a Sentinel
// names, through go-redis's failover client.
func TestSentinel(t *testing.T) {
	master := fleettest.Start(t)
	sentinel := fleettest.StartSentinel(t, master)
	u := "redis://" + sentinel.Addr() + "/0?master_name=" + fleettest.MasterName + "&key=sentinel&timeout=1s"
	b, err := OpenBudget(u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for range 3 {
		b.Failure()
	}
	if !b.Shared() {
		t.Fatal("the Budget fell back to its local bucket through a Sentinel")
	}
	// The bucket is on the master itself.
	if got, err := master.Query("GET", "again:{sentinel}:budget"); got != "3000" || err != nil {
		t.Errorf("the master's bucket key = %q, %v; want 3000 (three tokens used)", got, err)
	}
	if _, _, err := ParseURL(u); err == nil || !strings.Contains(err.Error(), "Sentinel") {
		t.Errorf("ParseURL of a Sentinel URL: %v, want an error pointing to OpenBudget", err)
	}
}

// TestSentinelFailover: after a Sentinel promotes the replica, the
// Budget's decisions go to the new master, whose bucket holds what the old
// one had (replicated), and the Budget shares again.
func TestSentinelFailover(t *testing.T) {
	master := fleettest.Start(t)
	host, port, _ := strings.Cut(master.Addr(), ":")
	replica := fleettest.Start(t, "--replicaof", host, port)
	eventually(t, "the replica in sync", func() bool {
		info, err := replica.Query("INFO", "replication")
		return err == nil && strings.Contains(info, "master_link_status:up")
	})
	sentinel := fleettest.StartSentinel(t, master)
	var log logBuffer
	u := "redis://" + sentinel.Addr() + "/0?master_name=" + fleettest.MasterName + "&key=failover&timeout=1s&flush=10ms"
	b, err := OpenBudget(u, log.logger())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for range 3 {
		b.Failure()
	}
	eventually(t, "the Sentinel promoting the replica", func() bool {
		return sentinel.Do("SENTINEL", "FAILOVER", fleettest.MasterName) == nil
	})
	eventually(t, "decisions on the new master", func() bool {
		b.Failure()
		got, err := replica.Query("GET", "again:{failover}:budget")
		used, _ := strconv.Atoi(got)
		return err == nil && used >= 4000 && b.Shared()
	})
	t.Logf("log during the failover:\n%s", log.String())
}
