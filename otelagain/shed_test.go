package otelagain_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/shed"
)

// TestShedMetrics checks what a dashboard of a shedding server reads: the
// requests shed by class and reason, the queue's delay, and the requests
// in flight and queued.
func TestShedMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		var own int
		sh, err := s.tel.Shedder("api", shed.Config{Limit: 1, MaxQueue: 1,
			OnShed: func(shed.Criticality, shed.Reason) { own++ }})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		p, err := sh.Admit(ctx, shed.Request{})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			q, err := sh.Admit(ctx, shed.Request{Criticality: shed.Critical})
			if err != nil {
				t.Errorf("the queued request: %v", err)
				return
			}
			q.Done()
		}()
		synctest.Wait()
		if _, err := sh.Admit(ctx, shed.Request{Criticality: shed.Sheddable}); err == nil {
			t.Fatal("Admit with the queue full of a higher class: nil error, want shed")
		}
		if got := show(s.points(t, "again.shed.requests")); got != "{again.shed.criticality=SHEDDABLE,again.shed.name=api,again.shed.reason=queue_full}=1" {
			t.Errorf("again.shed.requests = %s, want 1 SHEDDABLE queue_full", got)
		}
		if own != 1 {
			t.Errorf("the Config's own OnShed ran %d times, want 1", own)
		}
		for name, want := range map[string]string{"again.shed.in_flight": "1", "again.shed.queued": "1"} {
			if got := show(s.points(t, name)); got != "{again.shed.name=api}="+want {
				t.Errorf("%s = %s, want %s", name, got, want)
			}
		}
		time.Sleep(3 * time.Millisecond)
		p.Done()
		<-done
		if got := show(s.points(t, "again.shed.queue.duration")); got != "{again.shed.criticality=CRITICAL,again.shed.name=api,again.shed.reason=admitted}=1/0.003" {
			t.Errorf("again.shed.queue.duration = %s, want one admitted after 3ms", got)
		}
		if got := show(s.points(t, "again.shed.in_flight")); got != "{again.shed.name=api}=0" {
			t.Errorf("again.shed.in_flight at the end = %s, want 0", got)
		}
	})
}
