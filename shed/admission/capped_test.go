package admission

import (
	"testing"
	"time"
)

func TestDeadlineCapWindowSlides(t *testing.T) {
	c := dropCap{slice: time.Second, fraction: 0.5}
	c.advance(0)
	for range 4 {
		c.arrive()
	}
	if !c.allow(0) || !c.allow(999*time.Millisecond) || c.allow(999*time.Millisecond) {
		t.Errorf("allow after 4 arrivals at 50%%: want two drops, then none")
	}
	if c.allow(10 * time.Second) {
		t.Errorf("allow 10s later with no arrival in the window = true, want false")
	}
	c.arrive() // counted in the slice allow made current
	c.arrive()
	if !c.allow(10*time.Second) || c.allow(10*time.Second) {
		t.Errorf("allow after 2 new arrivals, the old ones out of the window: want one drop, then none")
	}
}
