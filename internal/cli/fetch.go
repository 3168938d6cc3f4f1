package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/internal/calc"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	"github.com/spf13/cobra"
)

// fetchFlags holds the flags of `again fetch` as given.
type fetchFlags struct {
	method, data, dataRaw, output  string
	headers                        []string
	include, location              bool
	timeout, retryOn, maxRetryWait string
	key                            string
}

func newFetchCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fetch [flags] URL",
		Short: "Send an HTTP request, retrying safely with backoff",
		Long: `fetch sends one HTTP request, like a small curl, and retries it with
exponential backoff and jitter when it fails for a reason worth retrying:
a network failure, or a status in --retry-on (429, 502, 503, 504 by
default). A server's Retry-After (or IETF RateLimit reset) replaces the
schedule's wait; one longer than --max-retry-after, or past --deadline,
ends retrying at once.

POST and PATCH requests are retried only with an Idempotency-Key, which
fetch adds (a random UUID, the same on every attempt) unless
--idempotency-key off; a request that could not connect at all is
retried whatever its method. Each retry prints one line on stderr: the
attempt, the status or error, and the wait. Redirects are not followed
unless -L is given.

Only the final response's body is written, whatever its status, as curl
--fail-with-body does. The -o file is opened before anything is sent, so
one that cannot be created is a usage error, but emptied only when the
final response arrives: a fetch that gets no response leaves an existing
file as it was and removes one it created; a body cut short leaves what
arrived, as in curl.

Durations are Go syntax (500ms, 1.5s, 2m) or a bare number of milliseconds.
Exit status: 0 for a final 2xx or 3xx response, 1 for a final 4xx or 5xx
or a network failure after all retries, 2 for a usage error.`,
		Example: `  # GET with the default policy (4 attempts, 500 ms doubling, full jitter).
  again fetch https://api.example.com/items

  # POST JSON from a file (reopened for each attempt), keep the headers.
  again fetch -d @order.json -H 'Content-Type: application/json' -i https://api.example.com/orders

  # Up to 6 retries within 30 s overall, 5 s per attempt, also on 500.
  again fetch --retries 6 --deadline 30s --timeout 5s --retry-on 429,500,502,503,504 -o out.json https://example.com/data`,
		Args: cobra.ArbitraryArgs,
	}
	var f fetchFlags
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVarP(&f.method, "method", "X", "", "request method (default GET, or POST when data is given)")
	fs.StringVarP(&f.data, "data", "d", "", "request body: a string, @FILE to send a file as is (reopened for each attempt), or @- for stdin (retried only if at most 1 MiB)")
	fs.StringVar(&f.dataRaw, "data-raw", "", "request body sent as is, even when it starts with @")
	fs.StringArrayVarP(&f.headers, "header", "H", nil, "request header 'Name: value' (repeatable)")
	fs.StringVarP(&f.output, "output", "o", "-", "write the body to this file instead of stdout")
	fs.BoolVarP(&f.include, "include", "i", false, "write the status line and headers before the body")
	fs.BoolVarP(&f.location, "location", "L", false, "follow redirects (up to 10)")
	pf := AddPolicyFlags(fs)
	fs.Var(textFlag{s: &f.timeout, typ: "duration"}, "timeout", "limit on each attempt until its response headers arrive (default none)")
	f.retryOn = "429,502,503,504"
	fs.Var(textFlag{s: &f.retryOn, typ: "list"}, "retry-on", "comma-separated HTTP statuses to retry, or none")
	f.maxRetryWait = "1m"
	fs.Var(textFlag{s: &f.maxRetryWait, typ: "duration"}, "max-retry-after", "longest Retry-After to wait for; a longer one ends retrying")
	f.key = "auto"
	fs.Var(textFlag{s: &f.key, typ: "auto|off|KEY"}, "idempotency-key", "Idempotency-Key for POST and PATCH: auto (random), off, or the key to send")

	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		in, err := pf.Parse()
		if err != nil {
			return err
		}
		req, tr, err := f.build(cmd, args, env, in)
		if err != nil {
			return err
		}
		out, err := openOutput(f.output, env.Stdout)
		if err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return err
		}
		ctx := cmd.Context()
		if in.Deadline > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, in.Deadline)
			defer cancel()
		}
		base := http.DefaultTransport.(*http.Transport).Clone()
		defer base.CloseIdleConnections()
		tr.Base = base
		return f.fetch(req.WithContext(ctx), tr, out, env)
	}
	return cmd
}

// output is where the final response goes: stdout, or the file of -o. The
// file is opened before the request is sent, so that a path that cannot be
// written is a usage error rather than a response lost after the server
// acted on the request; it is truncated only when the final response
// arrives, so a fetch that gets no response leaves an existing file as it
// was and creates none.
type output struct {
	w       io.Writer
	file    *os.File // nil for stdout
	created bool     // the file did not exist before
}

func openOutput(path string, stdout io.Writer) (*output, error) {
	if path == "-" {
		return &output{w: stdout}, nil
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	created := err == nil
	if errors.Is(err, fs.ErrExist) {
		// O_CREATE as well: a dangling symbolic link is followed and its
		// target created, as without O_EXCL.
		file, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
	}
	if err != nil {
		return nil, Usagef("--output: cannot create %q: %v", path, errors.Unwrap(err))
	}
	return &output{w: file, file: file, created: created}, nil
}

// start readies the output for the final response: an existing regular
// file is emptied (a device or a pipe cannot be).
func (o *output) start() error {
	if o.file == nil {
		return nil
	}
	if st, err := o.file.Stat(); err == nil && st.Mode().IsRegular() {
		if err := o.file.Truncate(0); err != nil {
			return fmt.Errorf("cannot write the response: %w", err)
		}
	}
	return nil
}

// close closes the file, removing it if it was created for a response that
// never came.
func (o *output) close(responded bool) error {
	if o.file == nil {
		return nil
	}
	err := o.file.Close()
	if !responded && o.created {
		os.Remove(o.file.Name())
	}
	if err != nil {
		return fmt.Errorf("cannot write the response: %w", err)
	}
	return nil
}

// build validates the command line and returns the request and the
// transport (without its Base).
func (f *fetchFlags) build(cmd *cobra.Command, args []string, env *Env, in calc.Input) (*http.Request, *retryhttp.Transport, error) {
	if len(args) != 1 {
		if len(args) == 0 {
			return nil, nil, Usagef("missing URL; usage: again fetch [flags] URL (see 'again fetch --help')")
		}
		return nil, nil, Usagef("unexpected argument %q; fetch takes one URL (see 'again fetch --help')", args[1])
	}
	u, err := url.Parse(args[0])
	if err != nil || (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")) || u.Host == "" {
		shown := args[0]
		if err == nil && u.User != nil {
			shown = u.Redacted() // never print a password
		}
		return nil, nil, Usagef("URL must be an absolute http or https URL, got %q", shown)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, nil, Usagef("URL port must be from 1 to 65535, got %s", p)
		}
	}
	tr := &retryhttp.Transport{Policy: in.Policy}
	if tr.AttemptTimeout, err = durationFlag("timeout", f.timeout, true); err != nil {
		return nil, nil, err
	}
	if tr.MaxRetryAfter, err = durationFlag("max-retry-after", f.maxRetryWait, false); err != nil {
		return nil, nil, err
	}
	if tr.MaxRetryAfter == 0 {
		// The flag's 0 means "wait for no Retry-After at all", which the
		// Transport spells as a negative limit (its 0 is the default).
		tr.MaxRetryAfter = -1
	}
	if tr.RetryStatuses, err = parseStatuses(f.retryOn); err != nil {
		return nil, nil, err
	}
	if cmd.Flags().Changed("data") && cmd.Flags().Changed("data-raw") {
		return nil, nil, Usagef("--data and --data-raw are exclusive; give one request body")
	}
	hasData := cmd.Flags().Changed("data") || cmd.Flags().Changed("data-raw")
	method := f.method
	if method == "" {
		method = http.MethodGet
		if hasData {
			method = http.MethodPost
		}
	} else if !isToken(method) {
		return nil, nil, Usagef("--method must be an HTTP method such as GET or POST, got %q", method)
	}
	req, err := http.NewRequest(method, args[0], nil)
	if err != nil {
		return nil, nil, Usagef("URL must be an absolute http or https URL, got %q", args[0])
	}
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		value = strings.TrimSpace(value)
		if !ok || !isToken(name) || !validHeaderValue(value) {
			return nil, nil, Usagef("--header must be 'Name: value' with a valid header name and no control characters, got %q", h)
		}
		if http.CanonicalHeaderKey(name) == "Host" {
			req.Host = value
			continue
		}
		req.Header.Add(name, value)
	}
	switch f.key {
	case "auto":
		// The library adds no key unless asked: a person asked to retry
		// this one request, so fetch asks.
		tr.GenerateIdempotencyKey = true
	case "off":
	default:
		if !validHeaderValue(f.key) {
			return nil, nil, Usagef("--idempotency-key must be auto, off or a key without control characters, got %q", f.key)
		}
		if req.Header.Get("Idempotency-Key") != "" {
			return nil, nil, Usagef("--idempotency-key %q conflicts with the Idempotency-Key header; give the key once", f.key)
		}
		req.Header.Set("Idempotency-Key", f.key)
	}
	// The body is opened last, so that no usage error leaves a file open.
	body, err := f.body(cmd, env)
	if err != nil {
		return nil, nil, err
	}
	if body.rc != nil {
		req.Body, req.GetBody, req.ContentLength = body.rc, body.getBody, body.size
	}
	return req, tr, nil
}

// requestBody is the request body of fetch with how to replay it.
type requestBody struct {
	rc      io.ReadCloser
	getBody func() (io.ReadCloser, error)
	size    int64
}

// body opens the body given with --data or --data-raw. A file is opened
// now, to report a missing one as a usage error, and reopened for each
// retry, so it is never read whole into memory; stdin cannot be reopened,
// so the transport buffers it (up to 1 MiB) to be able to retry.
func (f *fetchFlags) body(cmd *cobra.Command, env *Env) (requestBody, error) {
	switch {
	case cmd.Flags().Changed("data-raw"):
		return stringBody(f.dataRaw), nil
	case !cmd.Flags().Changed("data"):
		return requestBody{}, nil
	case f.data == "@-":
		return requestBody{rc: io.NopCloser(env.Stdin)}, nil
	case !strings.HasPrefix(f.data, "@"):
		return stringBody(f.data), nil
	}
	path := f.data[1:]
	file, err := os.Open(path)
	if err != nil {
		return requestBody{}, Usagef("--data @FILE: cannot open %q: %v", path, errors.Unwrap(err))
	}
	st, err := file.Stat()
	if err != nil || !st.Mode().IsRegular() {
		file.Close()
		return requestBody{}, Usagef("--data @FILE must name a regular file, got %q", path)
	}
	return requestBody{
		rc:      file,
		getBody: func() (io.ReadCloser, error) { return os.Open(path) },
		size:    st.Size(),
	}, nil
}

func stringBody(s string) requestBody {
	return requestBody{
		rc:      io.NopCloser(strings.NewReader(s)),
		getBody: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(s)), nil },
		size:    int64(len(s)),
	}
}

// fetch sends req through tr, reporting retries on stderr, and writes the
// final response.
func (f *fetchFlags) fetch(req *http.Request, tr *retryhttp.Transport, out *output, env *Env) (err error) {
	// Every response RoundTrip returns is reported to OnSuccess or OnGiveUp,
	// with the attempts of its own hop (with -L each hop is a round trip).
	attempts := 1
	tr.OnSuccess = func(e retryhttp.Event) { attempts = e.Attempt }
	tr.OnRetry = func(e retryhttp.Event) {
		wait := "retrying in " + roundDelay(e.Delay).String()
		if e.HintHeader != "" {
			wait += " as " + hintHeader(e) + " asks"
		}
		fmt.Fprintf(env.Stderr, "again: attempt %d/%d failed (%s); %s\n", e.Attempt, e.MaxAttempts, outcome(e), wait)
	}
	tr.OnGiveUp = func(e retryhttp.Event) {
		attempts = e.Attempt
		if e.Response == nil || e.Reason == retry.ErrExhausted {
			return // the final error or status line says it all
		}
		fmt.Fprintf(env.Stderr, "again: attempt %d/%d failed (%s); %s\n", e.Attempt, e.MaxAttempts, outcome(e), f.giveUpReason(e))
	}
	client := &http.Client{Transport: tr}
	if !f.location {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	resp, err := client.Do(req)
	defer func() {
		if cerr := out.close(resp != nil); err == nil {
			err = cerr
		}
	}()
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the URL, query values included
		}
		return err
	}
	defer resp.Body.Close()
	if err := f.write(resp, out); err != nil {
		return err
	}
	if resp.StatusCode >= 400 {
		return fmt.Errorf("server answered %s after %d attempt%s", resp.Status, attempts, plural(attempts))
	}
	return nil
}

// write writes the final response to the output: the status line and
// headers with --include, then the body.
func (f *fetchFlags) write(resp *http.Response, o *output) error {
	if err := o.start(); err != nil {
		return err
	}
	out := &writeErr{w: o.w}
	if f.include {
		fmt.Fprintf(out, "%s %s\r\n", resp.Proto, resp.Status)
		resp.Header.Write(out)
		io.WriteString(out, "\r\n")
	}
	if out.err == nil {
		if _, err := io.Copy(out, resp.Body); err != nil && out.err == nil {
			return fmt.Errorf("reading the response body: %w", err)
		}
	}
	if out.err != nil {
		return fmt.Errorf("cannot write the response: %w", out.err)
	}
	return nil
}

// writeErr remembers the first error of its writer, so that a failure to
// write the output is told apart from a failure to read the response.
type writeErr struct {
	w   io.Writer
	err error
}

func (w *writeErr) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.w.Write(p)
	w.err = err
	return n, err
}

// giveUpReason says why a failed response was not retried.
func (f *fetchFlags) giveUpReason(e retryhttp.Event) string {
	switch {
	case e.Reason == retry.ErrRetryAfterTooLong:
		return fmt.Sprintf("giving up: %s asks for %s, more than --max-retry-after %s",
			hintHeader(e), calc.Human(e.Hint), f.maxRetryWait)
	case e.Reason == retry.ErrDeadline && e.HintHeader != "":
		return fmt.Sprintf("giving up: %s asks for %s, past the --deadline", hintHeader(e), calc.Human(e.Hint))
	case e.Reason == retry.ErrDeadline:
		return "giving up: the next retry would start after the --deadline"
	case errors.Is(e.Reason, retryhttp.ErrBodyTooLarge) && f.data == "@-":
		return "not retried: standard input was more than 1 MiB, too much to keep for a retry (send a file with -d @FILE instead)"
	case errors.Is(e.Reason, retryhttp.ErrNotReplayable):
		return strings.TrimPrefix(e.Reason.Error(), "retryhttp: ")
	}
	return "giving up: " + e.Reason.Error()
}

// outcome is the status or the error of a failed attempt.
func outcome(e retryhttp.Event) string {
	if e.Response != nil {
		return e.Response.Status
	}
	return e.Err.Error()
}

// hintHeader names the header that set a server-requested wait, with its
// value as the server sent it: "Retry-After: 30".
func hintHeader(e retryhttp.Event) string {
	return e.HintHeader + ": " + strings.Join(e.Response.Header.Values(e.HintHeader), ", ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// durationFlag parses the duration flag name; empty means 0 when optional.
func durationFlag(name, s string, optional bool) (time.Duration, error) {
	if s == "" && optional {
		return 0, nil
	}
	d, err := calc.ParseDuration(s)
	var ie *calc.InputError
	if errors.As(err, &ie) {
		return 0, Usagef("--%s %s", name, ie.Detail())
	}
	return d, err
}

// parseStatuses parses --retry-on: "none" or comma-separated statuses.
func parseStatuses(s string) ([]int, error) {
	if strings.TrimSpace(s) == "none" {
		return []int{}, nil
	}
	var codes []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 100 || n > 599 {
			return nil, Usagef("--retry-on must be none or a comma-separated list of HTTP statuses from 100 to 599, got %q", s)
		}
		codes = append(codes, n)
	}
	return codes, nil
}

// validHeaderValue reports whether s may be sent as a header value: no
// control characters but horizontal tab (RFC 9110, section 5.5), which
// net/http would otherwise reject only once the request is being sent.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// isToken reports whether s is an HTTP token (RFC 9110, section 5.6.2), as
// method and header names must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
