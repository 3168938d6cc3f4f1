// Package web is `again web`: it serves the calculator page, or writes it
// out as static files. The page itself is internal/web (imported as
// webmodel).
package web

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	proxymodel "github.com/again-go/again/cmd/again/internal/proxy"
	webmodel "github.com/again-go/again/cmd/again/internal/web"
	"github.com/spf13/cobra"
)

// defaultWebAddr is where `again web` listens unless told otherwise:
// loopback only, so the page is not served to the network by accident.
const defaultWebAddr = "127.0.0.1:8080"

// NewCmd returns `again web`: its flags are validated into an Options,
// which webRun serves or exports.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "web",
		Short: "Serve the backoff calculator page, or write it out as static files",
		Long: `web serves the backoff calculator page, 'again calc' compiled to WebAssembly
and run in your browser, until Ctrl-C; or --export writes it out as static
files. Guide: docs/cli.md (web).`,
		Example: `  # Serve the page on http://127.0.0.1:8080/ and open it.
  again web --open

  # Any free port; the URL is printed.
  again web --listen 0

  # Write the page out for a static host.
  again web --export ./site`,
		Args: cmdutil.NoArgs,
	}
	addr := defaultWebAddr
	var open bool
	var export string
	var force, quiet bool
	flags := cmd.Flags()
	flags.Var(cmdutil.Text(&addr, "addr"), "listen", "address to listen on; a bare port is loopback")
	flags.BoolVar(&open, "open", false, "open the page in the default browser")
	flags.StringVar(&export, "export", "", "write the page's files into `dir`, new or empty, and exit instead of serving")
	flags.BoolVarP(&quiet, "quiet", "q", false, "print no URL, only warnings and errors")
	flags.BoolVar(&force, "force", false, "with --export, write into a directory that is not empty, replacing the page's files (renamed over, never written through)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if cmd.Flags().Changed("export") {
			if export == "" {
				return cmdutil.BadValue("--export", "", "a directory")
			}
			if cmd.Flags().Changed("listen") || open {
				return cmdutil.Usagef("--export writes files and serves nothing; it cannot be combined with --listen or --open")
			}
			return webRun(cmd.Context(), &Options{Env: env, Export: export, Force: force})
		}
		if force {
			return cmdutil.Usagef("--force goes with --export DIR; serving writes nothing")
		}
		// The same address rules as proxy's --listen: one flag, one meaning.
		listen, err := proxymodel.ListenAddr(addr)
		if err != nil {
			var se *proxymodel.SpecError
			errors.As(err, &se)
			return cmdutil.BadValue(se.Flag, se.Value, se.Want) // proxy's words for the same flag
		}
		return webRun(cmd.Context(), &Options{Env: env, Addr: listen, Open: open, Quiet: quiet})
	}
	cmdutil.Alias(cmd, "addr", "listen")
	return cmd
}

// Options is what one `again web` was asked, its flags validated: either
// Export, or Addr and Open.
type Options struct {
	Env    *cmdutil.Env
	Addr   string // --listen: where to serve the page, host:port
	Open   bool   // --open: open the page in the default browser
	Export string // --export: the directory to write the page into instead; "" to serve
	Force  bool   // --force: write into a directory that is not empty
	Quiet  bool   // -q, --quiet: no URL lines
}

// webRun writes the page into opts.Export, or serves it on opts.Addr until
// ctx is done.
func webRun(ctx context.Context, opts *Options) error {
	if opts.Export == "" {
		return serveWeb(ctx, opts.Env, opts.Addr, opts.Open, opts.Quiet)
	}
	if !opts.Force {
		if err := refuseNonEmpty(opts.Export); err != nil {
			return err
		}
	}
	if err := webmodel.Export(opts.Export); err != nil {
		// The file system's error says what failed without web's prefix,
		// which would only repeat the subcommand's name.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe
		}
		return cmdutil.Exit(cmdutil.ExitFailure, fmt.Errorf("cannot write the page into %s: %w", opts.Export, err))
	}
	fmt.Fprintf(opts.Env.Stdout, "Wrote the calculator page to %s\n", opts.Export)
	return nil
}

// refuseNonEmpty returns a usage error if dir is a directory that holds
// anything, naming the first few entries: --export would replace a user's
// index.html without a word.
func refuseNonEmpty(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() {
		return nil // new (or not a directory: Export says why it fails)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return nil // Export reports what cannot be read or written
	}
	const shown = 3
	names := make([]string, 0, shown)
	for _, e := range entries[:min(len(entries), shown)] {
		names = append(names, strconv.Quote(e.Name()))
	}
	list := strings.Join(names, ", ")
	if more := len(entries) - shown; more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return cmdutil.Usagef("--export %s: the directory is not empty (it holds %s); name a new or empty directory, or add --force to replace the page's files in it", dir, list)
}

// serveWeb serves the page on addr until ctx is done, then shuts down,
// letting requests in flight finish for up to five seconds.
func serveWeb(ctx context.Context, env *cmdutil.Env, addr string, open, quiet bool) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		// The *net.OpError's own text repeats the address as "listen tcp
		// ADDR:"; its cause alone says what went wrong.
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			err = oe.Err
		}
		return fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	url := pageURL(ln.Addr().(*net.TCPAddr))
	srv := &http.Server{
		Handler: webmodel.Handler(),
		// net/http's own lines (a TLS handshake gone wrong, a panic in a
		// handler) are the command's: prefixed and printable like its others.
		ErrorLog:          log.New(cmdutil.LineWriter{W: env.Stderr, Prefix: "again web: "}, "", 0),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       time.Minute,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		fmt.Fprintf(env.Stderr, "again web: listening on %s, beyond this machine; use --listen PORT to keep the page local\n", ln.Addr())
	}
	if !quiet {
		fmt.Fprintf(env.Stdout, "Serving the backoff calculator at %s\nPress Ctrl-C to stop.\n", url)
	}
	if open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(env.Stderr, "again web: could not open a browser (%v); open %s yourself\n", err, url)
		}
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdown)
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && serr != nil {
		return serr
	}
	if err != nil {
		return err
	}
	// Stopped by a signal: 128+N, as every other command, so that a
	// script or supervisor sees that the server did not end by itself.
	if sig := cmdutil.SignalCause(ctx); sig != nil {
		return cmdutil.Stopped(sig, "")
	}
	return nil
}

// pageURL returns the URL a browser on this machine reaches the listener
// at: an unspecified address (0.0.0.0, ::) becomes the loopback one.
func pageURL(a *net.TCPAddr) string {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return fmt.Sprintf("http://%s:%d/", host, a.Port)
}

// openBrowser asks the desktop to open url, without waiting for the browser.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reap the opener; its exit status says nothing useful
	return nil
}
