// Command waitcmp measures `again wait` side by side with wait4x.
//
// BENCHMARKS.md reports what it measures (issue 30): start to exit on a
// target already ready, how soon each sees a server that starts accepting,
// the start-up storm of many waiters against a PostgreSQL that is down, and
// the binary sizes. It is a program, not a test, because it needs a wait4x
// binary that this repository neither ships nor builds; it is in the
// cmd/again module because it starts its PostgreSQL with readytest and
// draws its chart with sim's chart package, both internal to this module.
// No package imports it and the again binary does not contain it.
//
// Run from the repository, with wait4x's binary path in AGAIN_WAIT4X:
//
//	AGAIN_WAIT4X=/path/to/wait4x go run ./cmd/again/internal/ready/readytest/waitcmp -svg docs/wait-storm.svg
//
// It builds the again binary from this checkout, starts a PostgreSQL on a
// free loopback port (apt-get install postgresql), prints Markdown tables
// on stdout and writes the storm's chart. Everything listens on 127.0.0.1
// and every process it starts is killed after a bound. Without
// AGAIN_WAIT4X it exits 2 and measures nothing.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/again-go/again/cmd/again/internal/ready/readytest"
	"github.com/again-go/again/cmd/again/internal/sim/chart"
)

func main() {
	n := flag.Int("n", 11, "runs of each start-to-exit and late-start measurement (the median is reported)")
	waiters := flag.Int("waiters", 200, "waiters in the start-up storm")
	down := flag.Duration("down", 20*time.Second, "how long the storm's PostgreSQL is down")
	bin := flag.Duration("bin", 100*time.Millisecond, "width of the storm chart's bins")
	svg := flag.String("svg", "", "write the storm's chart (SVG) to this file")
	flag.Parse()
	wait4x := os.Getenv("AGAIN_WAIT4X")
	if wait4x == "" {
		fmt.Fprintln(os.Stderr, "waitcmp: set AGAIN_WAIT4X to the path of a wait4x binary; nothing measured")
		os.Exit(2)
	}
	if err := run(wait4x, *n, *waiters, *down, *bin, *svg); err != nil {
		fmt.Fprintln(os.Stderr, "waitcmp:", err)
		os.Exit(1)
	}
}

// tool is one waiter's command line for a target.
type tool struct {
	name string
	args func(t target) []string // the command line, path first
}

// target is what a waiter waits for, in each tool's syntax.
type target struct {
	kind string // "tcp" or "postgres"
	addr string
}

func (t target) url() string {
	if t.kind == "tcp" {
		return "tcp://" + t.addr
	}
	// sslmode=disable: both tools then do the same work, a plain
	// connection, where lib/pq (wait4x) would otherwise require TLS and
	// pgx (again) try it first.
	return "postgres://app:" + readytest.Password + "@" + t.addr + "/" + readytest.Database + "?sslmode=disable"
}

func againTool(path string, extra ...string) tool {
	return tool{"again wait" + strings.Join(append([]string{""}, extra...), " "), func(t target) []string {
		return append(append([]string{path, "wait"}, extra...), t.url())
	}}
}

func wait4xTool(path string, extra ...string) tool {
	return tool{"wait4x" + strings.Join(append([]string{""}, extra...), " "), func(t target) []string {
		if t.kind == "tcp" {
			return append([]string{path, "tcp", t.addr}, extra...)
		}
		return append([]string{path, "postgresql", t.url()}, extra...)
	}}
}

func run(wait4x string, n, waiters int, down, bin time.Duration, svg string) error {
	dir, err := os.MkdirTemp("", "waitcmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	again := filepath.Join(dir, "again")
	if out, err := exec.Command("go", "build", "-o", again, "github.com/again-go/again/cmd/again").CombinedOutput(); err != nil {
		return fmt.Errorf("building again: %v: %s", err, out)
	}
	// The flags of wait4x's own release build (its Makefile): no DWARF,
	// no build id, trimmed paths.
	againStripped := filepath.Join(dir, "again-w")
	if out, err := exec.Command("go", "build", "-trimpath", "-ldflags=-buildid= -w", "-o", againStripped, "github.com/again-go/again/cmd/again").CombinedOutput(); err != nil {
		return fmt.Errorf("building again: %v: %s", err, out)
	}
	fmt.Printf("Measured %s, %s/%s, %d CPUs, load average %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), loadavg())

	fmt.Println("| binary | size |\n|---|---:|")
	for _, b := range [][2]string{{"again (go build)", again}, {"again (-trimpath -ldflags='-buildid= -w')", againStripped}, {"wait4x (AGAIN_WAIT4X)", wait4x}} {
		fi, err := os.Stat(b[1])
		if err != nil {
			return err
		}
		fmt.Printf("| %s | %.1f MB |\n", b[0], float64(fi.Size())/1e6)
	}
	fmt.Println()

	pg, err := readytest.StartPostgres()
	if err != nil {
		return err
	}
	defer pg.Stop()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer tcp.Close()
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	tools := []tool{againTool(again), wait4xTool(wait4x)}
	targets := []target{{"tcp", tcp.Addr().String()}, {"postgres", pg.Addr}}

	fmt.Printf("Start to exit, target already ready (median of %d, min..max, ms)\n\n", n)
	fmt.Println("| target | again wait | wait4x |\n|---|---:|---:|")
	for _, t := range targets {
		row := "| " + t.kind + " |"
		for _, tl := range tools {
			var d []time.Duration
			for range n {
				start := time.Now()
				if err := runOnce(tl.args(t), 30*time.Second); err != nil {
					return fmt.Errorf("%s on a ready %s: %v", tl.name, t.kind, err)
				}
				d = append(d, time.Since(start))
			}
			row += " " + summary(d) + " |"
		}
		fmt.Println(row)
	}
	fmt.Println()

	fmt.Printf("Ready after the port starts accepting, opened 1-3 s after the waiter started (median of %d, min..max, ms)\n\n", n)
	fmt.Println("| target | again wait | wait4x |\n|---|---:|---:|")
	for _, t := range targets {
		row := "| " + t.kind + " |"
		for _, tl := range tools {
			var d []time.Duration
			for i := range n {
				// 1-3 s, at offsets spread evenly over a second too (the
				// golden ratio's multiples), so that no run opens the port
				// in step with wait4x's 1 s interval.
				frac := math.Mod(float64(i)*0.6180339887, 1)
				after := time.Second + time.Duration(frac*float64(2*time.Second))
				lat, err := lateStart(tl, t, after)
				if err != nil {
					return fmt.Errorf("%s, %s opened after %v: %v", tl.name, t.kind, after, err)
				}
				d = append(d, lat)
			}
			row += " " + summary(d) + " |"
		}
		fmt.Println(row)
	}
	fmt.Println()

	storms := []tool{againTool(again), wait4xTool(wait4x), wait4xTool(wait4x, "--timeout", "1m"),
		wait4xTool(wait4x, "--timeout", "1m", "--backoff-policy", "exponential")}
	fmt.Printf("Start-up storm: %d waiters released at once against PostgreSQL reset for %v, then up (connections reaching the port)\n\n", waiters, down)
	fmt.Printf("| waiters | connections while down | per second while down | busiest %v, first %v | busiest %v, %v to up | its ÷ mean %v | ready after up (median, last) | exited not ready |\n",
		bin, settle, bin, settle, bin)
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	var panels []chart.Panel
	var ymax float64
	for _, tl := range storms {
		s, err := storm(tl, pg.Addr, waiters, down, bin)
		if err != nil {
			return fmt.Errorf("storm, %s: %v", tl.name, err)
		}
		fmt.Println(s.row(tl.name))
		p := s.panel(tl.name)
		for _, y := range p.Series[0].Y {
			ymax = max(ymax, y)
		}
		panels = append(panels, p)
	}
	fmt.Println()
	if svg == "" {
		return nil
	}
	for i := range panels {
		panels[i].YMax = ymax
	}
	f := chart.Figure{
		Title: fmt.Sprintf("Start-up storm: %d waiters, PostgreSQL down for %v", waiters, down),
		Note: fmt.Sprintf("connections reaching the port per %v; released at once at 0 s; each tool's defaults unless named; %s/%s, %d CPUs, load %s",
			bin, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), loadavg()),
		Panels:  panels,
		Columns: 2,
	}
	out, err := os.Create(svg)
	if err != nil {
		return err
	}
	if err := f.Render(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// runOnce runs argv to its end, its output discarded, and reports a
// non-zero exit.
func runOnce(argv []string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &limited{w: &stderr, n: 2000}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v: %s", err, stderr.String())
	}
	return nil
}

// lateStart starts a waiter on a port that refuses connections, opens the
// port (forwarding to the target's server) after the given time, and
// returns how long after the opening the waiter exited ready.
func lateStart(tl tool, t target, after time.Duration) (time.Duration, error) {
	gate, err := readytest.NewGate(t.addr)
	if err != nil {
		return 0, err
	}
	defer gate.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	argv := tl.args(target{t.kind, gate.Addr})
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &limited{w: &stderr, n: 2000}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return 0, fmt.Errorf("exited before the port opened: %v: %s", err, stderr.String())
	case <-time.After(after):
	}
	if err := gate.Open(); err != nil {
		cancel()
		<-done
		return 0, err
	}
	opened := time.Now()
	if err := <-done; err != nil {
		return 0, fmt.Errorf("%v: %s", err, stderr.String())
	}
	return time.Since(opened), nil
}

// stormResult is what the port saw in one storm: the time of each
// connection and of each waiter's exit, from the release.
type stormResult struct {
	down, bin time.Duration
	conns     []time.Duration
	ready     []time.Duration // exits with status 0
	failed    int
}

// storm releases waiters at once, all waiting for PostgreSQL behind a
// front that resets every connection until down has passed and then
// forwards them to pg.
func storm(tl tool, pg string, waiters int, down, bin time.Duration) (*stormResult, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer l.Close()
	res := &stormResult{down: down, bin: bin}
	var mu sync.Mutex
	var t0 time.Time // the release, set before any waiter can connect
	var fwd sync.WaitGroup
	defer fwd.Wait()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			at := time.Since(t0)
			res.conns = append(res.conns, at)
			mu.Unlock()
			if at < down {
				// A reset, as a host whose server is not there yet answers.
				_ = c.(*net.TCPConn).SetLinger(0)
				c.Close()
				continue
			}
			fwd.Add(1)
			go func() { defer fwd.Done(); proxy(c, pg) }()
		}
	}()

	// Every waiter is a shell blocked reading a pipe, which then execs the
	// tool: closing the pipe releases them all at once, so that their
	// process start, not the harness's loop, is what spreads them.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), down+90*time.Second)
	defer cancel()
	argv := tl.args(target{"postgres", l.Addr().String()})
	type exit struct {
		at  time.Duration
		err error
	}
	exits := make(chan exit, waiters)
	for range waiters {
		cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", `read _; exec "$0" "$@"`}, argv...)...)
		cmd.Stdin = pr
		if err := cmd.Start(); err != nil {
			pw.Close()
			pr.Close()
			return nil, err
		}
		go func() {
			err := cmd.Wait()
			mu.Lock()
			at := time.Since(t0)
			mu.Unlock()
			exits <- exit{at, err}
		}()
	}
	pr.Close()
	time.Sleep(500 * time.Millisecond) // the shells reach their read
	mu.Lock()
	t0 = time.Now()
	mu.Unlock()
	pw.Close()
	for range waiters {
		e := <-exits
		if e.err != nil {
			res.failed++
		} else {
			res.ready = append(res.ready, e.at)
		}
	}
	l.Close()
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(res.conns)
	slices.Sort(res.ready)
	return res, nil
}

// proxy forwards c to the server at addr until either side closes.
func proxy(c net.Conn, addr string) {
	defer c.Close()
	s, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return
	}
	defer s.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(s, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, s); done <- struct{}{} }()
	<-done
}

// counts is the number of connections in each bin from 0 to end.
func (r *stormResult) counts(end time.Duration) []int {
	n := int((end + r.bin - 1) / r.bin)
	c := make([]int, n)
	for _, at := range r.conns {
		if i := int(at / r.bin); i >= 0 && i < n {
			c[i]++
		}
	}
	return c
}

// settle is when the release's own burst is over: from then on, the
// busiest bin against the mean bin says whether the waiters poll in step.
const settle = 5 * time.Second

func (r *stormResult) row(name string) string {
	c := r.counts(r.down)
	// The mean is over the bins while waiters still poll: up to the last
	// connection, since wait4x's waiters give up at its 10 s default.
	last := 0
	for i, v := range c {
		if v > 0 {
			last = i
		}
	}
	total, early, late, lateTotal := 0, 0, 0, 0
	for i, v := range c {
		total += v
		if time.Duration(i)*r.bin < settle {
			early = max(early, v)
		} else if i <= last {
			late = max(late, v)
			lateTotal += v
		}
	}
	lateMean := float64(lateTotal) / float64(max(last+1-int(settle/r.bin), 1))
	readyCol := "none"
	if len(r.ready) > 0 {
		med := r.ready[len(r.ready)/2] - r.down
		last := r.ready[len(r.ready)-1] - r.down
		readyCol = fmt.Sprintf("%.2f s, %.2f s", med.Seconds(), last.Seconds())
	}
	return fmt.Sprintf("| %s | %d | %.0f | %d | %d | %.1f | %s | %d |", name, total, float64(total)/r.down.Seconds(),
		early, late, float64(late)/max(lateMean, 1e-9), readyCol, r.failed)
}

func (r *stormResult) panel(name string) chart.Panel {
	end := r.down + 5*time.Second
	if len(r.ready) > 0 {
		end = max(end, r.ready[len(r.ready)-1]+time.Second)
	}
	c := r.counts(end)
	x, y := make([]float64, len(c)), make([]float64, len(c))
	for i, v := range c {
		x[i] = (time.Duration(i) * r.bin).Seconds()
		y[i] = float64(v)
	}
	return chart.Panel{
		Title:  name,
		XLabel: "seconds since the release", YLabel: "connections per " + r.bin.String(),
		Series: []chart.Series{{Name: "connections", X: x, Y: y}},
		Shade:  [][2]float64{{0, r.down.Seconds()}}, ShadeLabel: "down: connections reset",
	}
}

// summary is "median (min..max)" in milliseconds.
func summary(d []time.Duration) string {
	slices.Sort(d)
	ms := func(v time.Duration) string { return fmt.Sprintf("%.0f", float64(v)/float64(time.Millisecond)) }
	return ms(d[len(d)/2]) + " (" + ms(d[0]) + ".." + ms(d[len(d)-1]) + ")"
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// limited keeps the first n bytes written to w and drops the rest, so a
// chatty waiter cannot fill the harness's memory.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
