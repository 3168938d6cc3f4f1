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

	"github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	"github.com/spf13/cobra"
)

// fetchFlags holds the flags of `again fetch` as given.
type fetchFlags struct {
	method, output                 string
	data, dataRaw, json            []string
	headers                        []string
	include, location              bool
	timeout, retryOn, maxRetryWait string
	key                            string
	curl                           curlFlags
	hedges                         *hedgeReport // with --hedge-after
}

func newFetchCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fetch [flags] URL",
		Short: "Send an HTTP request, retrying safely with backoff",
		Long: `fetch sends one HTTP request, like a small curl, and retries it with
exponential backoff and jitter when it fails for a reason worth retrying:
a network failure, or a status in --retry-on (429, 502, 503, 504 by
default). A server's Retry-After (or, without one, the reset of an
exhausted quota from RateLimit, RateLimit-Reset or X-RateLimit-Reset, in
seconds or as a Unix time) replaces the schedule's wait; one longer than
--max-retry-after, or past --deadline, ends retrying at once.
` + untilDeadlineHelp + `

--timeout bounds each attempt as a whole, the response body included, and
--connect-timeout each connection's setup. A body cut off mid-way (or
timed out) is retried like any network failure when the request may be
repeated and the output can start over: a regular -o file is emptied for
the next attempt; on stdout, what arrived stays and retrying stops.

POST and PATCH requests are retried only with an Idempotency-Key, which
fetch adds (a random UUID, the same on every attempt) unless
--idempotency-key off; a request that could not connect at all is
retried whatever its method. Each retry prints one line on stderr: the
attempt, the status or error, and the wait. Redirects are not followed
unless -L is given.

Only the final response's body is written, whatever its status, as curl
--fail-with-body does; with -f/--fail, none is written for a status of
400 or more. The -o file is opened before anything is sent, so one that
cannot be created is a usage error, but emptied only when the final
response arrives: a fetch that gets no usable response (a network
failure, a redirect loop with -L, an error status with --fail) leaves an
existing file as it was and removes one it created; a body cut short
leaves what arrived, as in curl.

As in curl: -d is repeatable, the parts joined with &, and sent as a form
(Content-Type application/x-www-form-urlencoded unless -H sets another); --json sends JSON
(repeated: concatenated) with Content-Type and Accept application/json;
-u user:password sends basic authentication; -v prints each attempt's
request and response headers on stderr, with credentials, cookies and
query values masked; --cacert FILE trusts the authorities in a PEM file.
A body from stdin (-d @-) is read first: up to 1 MiB it is sent with its
length and can be retried, a larger one is streamed once.

` + budgetHelp + `

` + hedgeHelp + `

SIGINT or SIGTERM (or SIGHUP, SIGQUIT) stops the fetch with status 130 or
143 (129, 131) and one line saying so.

Durations are Go syntax (500ms, 1.5s, 2m); --timeout, --deadline and
--max-retry-after need a unit (a bare 30 is 30 s to curl, 30 ms to calc).
--initial and --max also take a bare number of milliseconds.
Exit status: 0 for a final 2xx or 3xx response, 1 for a final 4xx or 5xx
or a network failure after all retries, 2 for a usage error, 128+N when
signal N stops it.`,
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
	fs.VarP(textFlag{s: &f.method, typ: "method"}, "method", "X", "request method (default GET, or POST when data is given)")
	fs.VarP(repeatedFlag{s: &f.data, typ: "data"}, "data", "d", "request body: a string, @FILE to send a file as is (reopened for each attempt), or @- for stdin (retried only if at most 1 MiB); repeated, joined with &")
	fs.Var(repeatedFlag{s: &f.dataRaw, typ: "data"}, "data-raw", "request body sent as is, even when it starts with @; repeated, joined with &")
	fs.Var(repeatedFlag{s: &f.json, typ: "data"}, "json", "JSON request body, as --data (repeated: concatenated); sets Content-Type and Accept to application/json")
	fs.VarP(repeatedFlag{s: &f.headers, typ: "header"}, "header", "H", "request header 'Name: value' (repeatable)")
	f.output = "-"
	fs.VarP(textFlag{s: &f.output, typ: "file"}, "output", "o", "write the body to this file instead of stdout")
	fs.BoolVarP(&f.include, "include", "i", false, "write the status line and headers before the body")
	fs.BoolVarP(&f.location, "location", "L", false, "follow redirects (up to 10)")
	pf := AddPolicyFlags(fs)
	fs.Var(textFlag{s: &f.timeout, typ: "duration"}, "timeout", "limit on each attempt, its response body included (default none)")
	f.retryOn = "429,502,503,504"
	fs.Var(textFlag{s: &f.retryOn, typ: "list"}, "retry-on", "comma-separated HTTP statuses to retry, or none")
	f.maxRetryWait = "1m"
	fs.Var(textFlag{s: &f.maxRetryWait, typ: "duration"}, "max-retry-after", "longest Retry-After to wait for (default 1m); a longer one ends retrying, and 0 waits for none")
	f.key = "auto"
	fs.Var(textFlag{s: &f.key, typ: "auto|off|KEY"}, "idempotency-key", "Idempotency-Key for POST and PATCH: auto (random), off, or the key to send")
	f.curl.add(fs)
	budgetURL := addBudgetFlag(fs)
	hf := addHedgeFlags(fs)

	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		in, err := pf.parseTimed()
		if err != nil {
			return err
		}
		base, rt, err := f.curl.transport(env)
		if err != nil {
			return err
		}
		defer base.CloseIdleConnections()
		req, tr, err := f.build(cmd, args, env, in)
		if err == nil {
			err = f.hedging(cmd, hf, tr, rt, env)
		}
		if err != nil {
			return err
		}
		tr.Base = rt
		budget, closer, err := openBudget(env, *budgetURL)
		var out *output
		if err == nil {
			out, err = openOutput(f.output, env.Stdout)
		}
		if err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			closeBudget(closer)
			return err
		}
		defer closeBudget(closer)
		tr.Budget = budget
		ctx := cmd.Context()
		if in.Deadline > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, in.Deadline)
			defer cancel()
		}
		if cmd.Flags().Changed("repeat") {
			return hf.run(req.WithContext(ctx), tr, f.hedges, env)
		}
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
	wrote   bool     // something was written since start
}

// Write writes to the output, noting that it did.
func (o *output) Write(p []byte) (int, error) {
	o.wrote = o.wrote || len(p) > 0
	return o.w.Write(p)
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
	o.wrote = false
	if o.file == nil {
		return nil
	}
	if o.rewindable() {
		if err := o.file.Truncate(0); err != nil {
			return fmt.Errorf("cannot write the response: %w", err)
		}
		if _, err := o.file.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("cannot write the response: %w", err)
		}
	}
	return nil
}

// rewindable reports whether start can empty the output for another
// attempt's body: a regular -o file can, stdout cannot.
func (o *output) rewindable() bool {
	if o.file == nil {
		return false
	}
	st, err := o.file.Stat()
	return err == nil && st.Mode().IsRegular()
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
	_, _, _, hasData, err := f.bodyParts(cmd.Flags())
	if err != nil {
		return nil, nil, err
	}
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
	if cmd.Flags().Changed("json") {
		// As curl's --json: unless a -H says otherwise.
		for _, name := range []string{"Content-Type", "Accept"} {
			if req.Header.Get(name) == "" {
				req.Header.Set(name, "application/json")
			}
		}
	} else if (cmd.Flags().Changed("data") || cmd.Flags().Changed("data-raw")) && req.Header.Get("Content-Type") == "" {
		// As curl's -d: a form, unless a -H says otherwise, so that
		// servers that read forms see the data.
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if f.curl.user != "" && req.Header.Get("Authorization") != "" {
		return nil, nil, Usagef("--user conflicts with the Authorization header; give the credentials once")
	}
	if err := f.curl.apply(req); err != nil {
		return nil, nil, err
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

// body opens the body given with --data, --data-raw or --json. A single
// @FILE is opened now, to report a missing one as a usage error, and
// reopened for each retry, so it is never read whole into memory; stdin
// cannot be reopened, so it is read into memory when small enough to be
// retried (see readStdinBody). Several parts are joined in memory, with &
// for --data and --data-raw as curl does, or concatenated for --json.
func (f *fetchFlags) body(cmd *cobra.Command, env *Env) (requestBody, error) {
	parts, raw, sep, given, err := f.bodyParts(cmd.Flags())
	if err != nil || !given {
		return requestBody{}, err
	}
	if raw {
		return stringBody(strings.Join(parts, sep)), nil
	}
	if len(parts) == 1 {
		return openPart(parts[0], env)
	}
	var joined strings.Builder
	for i, part := range parts {
		if i > 0 {
			joined.WriteString(sep)
		}
		b, err := openPart(part, env)
		if err != nil {
			return requestBody{}, err
		}
		err = func() error {
			defer b.rc.Close()
			if b.size < 0 {
				return Usagef("a body part from stdin (@-) joined with others must be at most %d bytes, as the joined body is kept in memory", retryhttp.DefaultMaxBufferedBody)
			}
			_, err := io.Copy(&joined, b.rc)
			return err
		}()
		if err != nil {
			return requestBody{}, err
		}
	}
	return stringBody(joined.String()), nil
}

// openPart opens one part of the body: a string, @FILE or @-.
func openPart(part string, env *Env) (requestBody, error) {
	switch {
	case part == "@-":
		return readStdinBody(env.Stdin)
	case !strings.HasPrefix(part, "@"):
		return stringBody(part), nil
	}
	path := part[1:]
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

// stringBody is a body held in memory. An empty one is http.NoBody, which
// net/http sends with "Content-Length: 0" (an empty reader would be sent
// chunked, its length unknown).
func stringBody(s string) requestBody {
	if s == "" {
		return requestBody{
			rc:      http.NoBody,
			getBody: func() (io.ReadCloser, error) { return http.NoBody, nil },
		}
	}
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
	tr.OnSuccess = func(e retryhttp.Event) { attempts = e.Attempt; f.hedges.answered(e) }
	tr.OnRetry = func(e retryhttp.Event) {
		wait := "retrying in " + roundDelay(e.Delay).String()
		if e.HintHeader != "" {
			wait += " as " + hintHeader(e) + " asks"
		}
		fmt.Fprintf(env.Stderr, "again: attempt %s failed (%s); %s\n", attemptOf(e.Attempt, e.MaxAttempts), outcome(e), wait)
	}
	tr.OnGiveUp = func(e retryhttp.Event) {
		attempts = e.Attempt
		if e.Response == nil || e.Reason == retry.ErrExhausted {
			return // the final error or status line says it all
		}
		fmt.Fprintf(env.Stderr, "again: attempt %s failed (%s); %s\n", attemptOf(e.Attempt, e.MaxAttempts), outcome(e), f.giveUpReason(e))
	}
	client := &http.Client{Transport: tr}
	if !f.location {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	// The output is written only for a usable response: not for an error
	// (with -L, a redirect loop returns the last redirect with one), nor
	// for a failed status with --fail. Otherwise a file -o created is
	// removed, and an existing one left as it was.
	written := false
	defer func() {
		if cerr := out.close(written); err == nil {
			err = cerr
		}
		if sig := signalCause(req.Context()); sig != nil && err != nil {
			// Whatever the error says (a cancelled attempt, a cut body,
			// a retry loop that stopped), a signal stopped the fetch.
			err = Exit(signalStatus(sig), fmt.Errorf("stopped: received %s", signalName(sig)))
		}
	}()
	usable := func(resp *http.Response) bool {
		return !f.curl.fail || resp.StatusCode < 400
	}
	// The body of a response that ends the request is read within its
	// attempt: --timeout bounds it too, and a body cut off mid-way is
	// retried like any network failure, if the output can start over.
	var read *http.Response
	var own error // ReadBody's last error that is not reading the body
	tr.ReadBody = func(resp *http.Response) error {
		read, own = resp, nil
		if f.location && followed(resp) || !usable(resp) {
			return nil // not the output: the client follows it, or --fail
		}
		written = true
		err := f.write(resp, out)
		var re *bodyReadError
		switch {
		case err == nil:
		case !errors.As(err, &re):
			own = err // writing the output failed
		case out.wrote && !out.rewindable():
			// Another attempt would add its body to what this one
			// wrote: keep what arrived, as curl does, and stop.
			own = fmt.Errorf("%v (not retried: the output cannot start over)", err)
		}
		if own != nil {
			return own
		}
		return err
	}
	if tr.Hedge != nil {
		// Copies run at once and only one may write the output: the
		// winner's body is written after RoundTrip (a body cut off is then
		// not retried).
		tr.ReadBody = nil
	}
	resp, err := client.Do(req)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		if own != nil && errors.Is(err, own) {
			return own // retry's account adds nothing to it
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the URL, query values included
		}
		return err
	}
	defer resp.Body.Close()
	if resp != read && usable(resp) {
		// A response with a status to retry, returned once retrying
		// stopped: ReadBody has not seen it.
		written = true
		if err := f.write(resp, out); err != nil {
			return err
		}
	}
	if resp.StatusCode >= 400 {
		return fmt.Errorf("server answered %s after %d attempt%s", resp.Status, attempts, plural(attempts))
	}
	return nil
}

// followed reports whether http.Client follows resp, a redirect with a
// Location, when redirects are followed.
func followed(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return resp.Header.Get("Location") != ""
	}
	return false
}

// signalCause returns the signal that cancelled ctx, if one did.
func signalCause(ctx context.Context) os.Signal {
	var se *SignalError
	if errors.As(context.Cause(ctx), &se) {
		return se.Signal
	}
	return nil
}

// write writes the final response to the output: the status line and
// headers with --include, then the body.
func (f *fetchFlags) write(resp *http.Response, o *output) error {
	if err := o.start(); err != nil {
		return err
	}
	out := &writeErr{w: o}
	if f.include {
		fmt.Fprintf(out, "%s %s\r\n", resp.Proto, resp.Status)
		resp.Header.Write(out)
		io.WriteString(out, "\r\n")
	}
	if out.err == nil {
		if _, err := io.Copy(out, resp.Body); err != nil && out.err == nil {
			return &bodyReadError{err}
		}
	}
	if out.err != nil {
		return fmt.Errorf("cannot write the response: %w", out.err)
	}
	return nil
}

// bodyReadError is a failure to read the response body, told apart from a
// failure to write it.
type bodyReadError struct{ err error }

func (e *bodyReadError) Error() string { return "reading the response body: " + e.err.Error() }
func (e *bodyReadError) Unwrap() error { return e.err }

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
	case e.Reason == retry.ErrBudget:
		return budgetSpent
	case errors.Is(e.Reason, retryhttp.ErrBodyTooLarge) && f.fromStdin():
		return "not retried: standard input was more than 1 MiB, too much to keep for a retry (send a file with -d @FILE instead)"
	case errors.Is(e.Reason, retryhttp.ErrNotReplayable):
		return strings.TrimPrefix(e.Reason.Error(), "retryhttp: ")
	}
	return "giving up: " + e.Reason.Error()
}

// fromStdin reports whether the body is read from stdin.
func (f *fetchFlags) fromStdin() bool {
	for _, part := range append(f.data, f.json...) {
		if part == "@-" {
			return true
		}
	}
	return false
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

// durationFlag parses the duration flag name, which needs a unit unless it
// is 0 (see requireUnit); empty means 0 when optional.
func durationFlag(name, s string, optional bool) (time.Duration, error) {
	if s == "" && optional {
		return 0, nil
	}
	if err := requireUnit(name, s); err != nil {
		return 0, err
	}
	d, err := calc.ParseDuration(s)
	var ie *calc.InputError
	if errors.As(err, &ie) {
		// Not ie.Detail(): it offers calc's bare milliseconds, which
		// requireUnit has just refused for these flags.
		return 0, Usagef("--%s must be a duration from 0 to 2562047h with a unit (Go syntax such as 500ms, 1.5s or 2m), got %q", name, s)
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
