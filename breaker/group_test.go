package breaker

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestGroupKeepsBreakersApart(t *testing.T) {
	g := &Group{Config: Config{MinCalls: -1}}
	get := func(key string) *Breaker {
		b, err := g.Get(key)
		if err != nil {
			t.Fatalf("Get(%q): %v", key, err)
		}
		return b
	}
	calls(get("a.example"), 1, errBoom)
	if get("a.example").State() != Open || get("b.example").State() != Closed {
		t.Fatalf("a: %v, b: %v; want a open and b closed", get("a.example").State(), get("b.example").State())
	}
	seen := map[string]State{}
	g.Range(func(k string, b *Breaker) bool { seen[k] = b.State(); return true })
	if fmt.Sprint(seen) != "map[a.example:open b.example:closed]" {
		t.Errorf("Range saw %v", seen)
	}
}

func TestGroupGetIsSafeForConcurrentUse(t *testing.T) {
	var g Group
	var wg sync.WaitGroup
	got := make([]*Breaker, 8)
	for i := range got {
		wg.Go(func() { got[i], _ = g.Get("host") })
	}
	wg.Wait()
	for _, b := range got {
		if b != got[0] {
			t.Fatal("Get made two breakers for one key")
		}
	}
}

func TestGroupInvalidConfig(t *testing.T) {
	g := &Group{Config: Config{Window: -1}}
	if b, err := g.Get("x"); b != nil || !errors.Is(err, ErrConfig) {
		t.Errorf("Get() = %v, %v, want nil and ErrConfig", b, err)
	}
}
