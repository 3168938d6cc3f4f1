package fleet

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/breaker"
	"github.com/redis/go-redis/v9"
)

// TestCluster: the Budget and the BreakerStore work on a Redis Cluster of
// three masters: every script's keys share one hash tag, so one slot,
// where keys without it would fail with CROSSSLOT.
func TestCluster(t *testing.T) {
	var addrs []string
	for range 3 {
		addrs = append(addrs, startServer(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf").Addr())
	}
	create := exec.Command("redis-cli", append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")...)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	ctx := context.Background()
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		eventually(t, "cluster_state:ok on "+a, func() bool {
			info, err := c.ClusterInfo(ctx).Result()
			return err == nil && strings.Contains(info, "cluster_state:ok")
		})
		c.Close()
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	defer c.Close()

	b := newTestBudget(t, BudgetConfig{Client: c, Key: "cluster", Timeout: 2 * time.Second})
	for range 3 {
		if !b.Failure() {
			t.Fatal("Failure() = false on a full bucket")
		}
	}
	if !b.Shared() {
		t.Fatal("the Budget fell back to its local bucket on a cluster")
	}
	if got, err := b.SharedTokens(ctx); got != 7 || err != nil {
		t.Errorf("SharedTokens = %v, %v; want 7", got, err)
	}

	st, err := NewBreakerStore(BreakerStoreConfig{Client: c, Key: "cluster", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Update(ctx, 0, breaker.SharedState{State: breaker.Open, Trips: 1})
	if err != nil || got.Version != 1 {
		t.Fatalf("Update on a cluster = %+v, %v; want version 1", got, err)
	}
	if _, ok, err := st.Probe(ctx, 1, time.Minute); !ok || err != nil {
		t.Fatalf("Probe on a cluster = %v, %v; want the claim (two keys, one slot)", ok, err)
	}
}
