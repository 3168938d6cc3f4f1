package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/again-go/again/fleet/fleettest"
)

// The overload's fleet, in processes: this test binary re-executed
// overloadProcesses times, each process running its share of the client
// goroutines (8 of 64) through its own fleet.Throttle, on one
// redis-server. A child is told what to do by the environment variable
// childEnv (a JSON childJob), says "ready" on stdout once its Throttle
// reads the fleet's counts, starts when it reads a line on stdin, and ends
// by writing its clientStats as JSON on stdout.

const childEnv = "AGAIN_BENCH_OVERLOAD_CHILD"

// childJob is a child's part of the run.
type childJob struct {
	URL   string        `json:"url"`
	Redis string        `json:"redis"`
	Index int           `json:"index"` // which child, from 0
	Run   time.Duration `json:"run"`
	Warm  time.Duration `json:"warm"`
	// Capacity, Clients and Demand are the whole fleet's overloadConfig.
	Capacity int `json:"capacity"`
	Clients  int `json:"clients"`
	Demand   int `json:"demand"`
}

func TestMain(m *testing.M) {
	if job := os.Getenv(childEnv); job != "" {
		if err := runChild(job, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "overload child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild runs one child's clients, job being its JSON childJob.
func runChild(job string, stdin io.Reader, stdout io.Writer) error {
	var j childJob
	if err := json.Unmarshal([]byte(job), &j); err != nil {
		return err
	}
	cfg := overloadConfig{capacity: j.Capacity, clients: j.Clients, demand: j.Demand, run: j.Run, warm: j.Warm}
	per := cfg.clients / overloadProcesses
	base := &http.Transport{MaxIdleConnsPerHost: per}
	defer base.CloseIdleConnections()
	env := overloadEnv{base: base, redis: j.Redis, fallbacks: new(atomic.Int64)}
	tr, th, closeFn, err := fleetTransport(env)
	if err != nil {
		return err
	}
	defer closeFn()
	// Connect before deciding: a child that decided on its own counts
	// alone would throttle as a local one does for a moment.
	for deadline := time.Now().Add(10 * time.Second); !th.Shared(); {
		if time.Now().After(deadline) {
			return errors.New("the fleet.Throttle did not reach redis-server in 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Fprintln(stdout, "ready")
	if _, err := bufio.NewReader(stdin).ReadString('\n'); err != nil {
		return fmt.Errorf("waiting for the start: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.run)
	defer cancel()
	start := time.Now()
	st := offer(ctx, cfg, j.Index*per, per, start, start.Add(cfg.warm), j.URL, transportSend(tr))
	st.Fallbacks = env.fallbacks.Load()
	return json.NewEncoder(stdout).Encode(st)
}

// child is a running child process of runOverloadProcesses.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// runOverloadProcesses runs the overload with its clients in
// overloadProcesses child processes sharing one fleet.Throttle key on a
// redis-server of the test's own.
func runOverloadProcesses(tb testing.TB, cfg overloadConfig) overloadResult {
	addr := fleettest.Start(tb).Addr()
	srv := newCapacityServer(cfg.capacity)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	children := make([]*child, overloadProcesses)
	for i := range children {
		job, _ := json.Marshal(childJob{URL: ts.URL, Redis: addr, Index: i, Run: cfg.run, Warm: cfg.warm,
			Capacity: cfg.capacity, Clients: cfg.clients, Demand: cfg.demand})
		// -test.run matching nothing, should TestMain ever fail to
		// recognize the child.
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+string(job))
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			tb.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			tb.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		c := &child{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
		children[i] = c
		tb.Cleanup(func() {
			// A child that failed or hung is ended here; one that
			// finished is already reaped.
			if c.cmd.ProcessState == nil {
				c.cmd.Process.Kill()
				c.cmd.Wait()
			}
		})
	}
	for i, c := range children {
		if line, err := c.out.ReadString('\n'); err != nil || line != "ready\n" {
			tb.Fatalf("child %d did not get ready: %q, %v", i, line, err)
		}
	}
	time.AfterFunc(cfg.warm, func() { srv.counting.Store(true) })
	for _, c := range children {
		io.WriteString(c.stdin, "go\n")
	}
	var all clientStats
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(children))
	for i, c := range children {
		wg.Go(func() {
			var st clientStats
			if err := json.NewDecoder(c.out).Decode(&st); err != nil {
				errs[i] = fmt.Errorf("child %d: reading its counts: %w", i, err)
			}
			if err := c.cmd.Wait(); err != nil {
				errs[i] = errors.Join(errs[i], fmt.Errorf("child %d: %w", i, err))
			}
			mu.Lock()
			all.Asked += st.Asked
			all.Lat = append(all.Lat, st.Lat...)
			all.LatAll = append(all.LatAll, st.LatAll...)
			all.Fallbacks += st.Fallbacks
			mu.Unlock()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		tb.Fatal(err)
	}
	return srv.result(cfg, all)
}
