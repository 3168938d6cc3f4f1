// Package fetch is `again fetch`: one HTTP request, like a small curl,
// retried safely.
//
// It retries with backoff (retryhttp), with curl's flags (fetch_curl.go),
// an atomic -o (fetch_output.go), --attempt-timeout over the body
// (fetch_timeout.go) and hedging (fetch_hedge.go).
package fetch

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

	"github.com/again-go/again/breaker"
	"github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/printable"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Options is what one `again fetch` was asked: its flags as given, and
// its arguments (one URL).
type Options struct {
	Env        *cmdutil.Env
	Policy     *cmdutil.PolicyFlags // the policy flags, --deadline a time limit
	Flags      *pflag.FlagSet       // the flags, to tell which were given
	Args       []string             // the URL, as given
	BudgetURL  string               // --budget, "" for none
	BreakerURL string               // --breaker-store, "" for none
	hedge      *hedgeFlags          // --hedge-after, --repeat, ...
	throttleK  string               // --throttle's K, if given
	classes    *cmdutil.ClassFlags  // --on-overload, --on-transient
	limit      string               // --limit, if given
	limitWait  string               // --limit-wait
	parallel   string               // --parallel

	method, output                 string
	data, dataRaw, json            []string
	headers                        []string
	include, location              bool
	timeout, retryOn, maxRetryWait string
	quiet                          bool // -q, --quiet: no line per retry
	key                            string
	curl                           curlFlags

	bodyCloser func() error // what the request body holds open, if anything
	hedges     *hedgeReport // with --hedge-after
}

// NewCmd returns `again fetch`: its flags and URL become an Options, which
// fetchRun validates and sends.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fetch [flags] URL",
		Short: "Send an HTTP request, retrying safely with backoff",
		Long: `fetch is a small curl that retries: it sends one HTTP request, and again after
a timeout, a network error or a retryable status, honouring Retry-After.
Guide: docs/cli.md (fetch).`,
		Example: `  # GET with the default policy (4 attempts, 500 ms doubling, full jitter).
  again fetch https://api.example.com/items

  # POST JSON from a file (read anew by each attempt), keep the headers.
  again fetch -d @order.json -H 'Content-Type: application/json' -i https://api.example.com/orders

  # Up to 6 retries within 30 s overall, 5 s per attempt, also on 500.
  again fetch --retries 6 --deadline 30s --attempt-timeout 5s --retry-on 429,500,502,503,504 -o out.json https://example.com/data

  # 429s and 503s back off from 1 s, network errors retry after 50 ms.
  again fetch --on-overload initial=1s,max=30s --on-transient initial=50ms --retries 6 https://api.example.com/items

  # 1000 requests from 50 workers, at most 8 in flight, throttled client-side;
  # the summary as JSON.
  again fetch --repeat 1000 --parallel 50 --limit 8 --throttle --format json http://localhost:8080/health`,
		Args: cobra.ArbitraryArgs,
	}
	var f Options
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.VarP(cmdutil.Text(&f.method, "method"), "method", "X", "request method (default GET, or POST when data is given)")
	fs.VarP(cmdutil.Repeated(&f.data, "data"), "data", "d", "request body: a string, @FILE to send a file as is (opened once, read anew by each attempt), or @- for stdin (retried and hedged only if at most 1 MiB); repeated, joined with &")
	fs.Var(cmdutil.Repeated(&f.dataRaw, "data"), "data-raw", "request body sent as is, even when it starts with @; repeated, joined with &")
	fs.Var(cmdutil.Repeated(&f.json, "data"), "json", "JSON request body, as --data (repeated: concatenated); sets Content-Type and Accept to application/json")
	fs.VarP(cmdutil.Repeated(&f.headers, "header"), "header", "H", "request header 'Name: value' (repeatable)")
	f.output = "-"
	fs.VarP(cmdutil.Text(&f.output, "file"), "output", "o", "write the body to this file instead of stdout, replacing it only once the final body arrived whole")
	fs.BoolVarP(&f.include, "include", "i", false, "write the status line and headers before the body")
	fs.BoolVarP(&f.location, "location", "L", false, "follow redirects (up to 10), sending credentials only to the same scheme, host and port")
	pf := cmdutil.AddPolicyFlags(fs)
	f.classes = cmdutil.AddClassFlags(fs, "429, 503, throttle and breaker rejections", "network errors, other statuses")
	fs.Var(cmdutil.Text(&f.timeout, "duration"), "attempt-timeout", "limit on each attempt, its response body included (default none)")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "print no line per retry")
	f.retryOn = "429,502,503,504"
	fs.Var(cmdutil.Text(&f.retryOn, "list"), "retry-on", "comma-separated HTTP statuses to retry, or none")
	f.maxRetryWait = "1m"
	fs.Var(cmdutil.Text(&f.maxRetryWait, "duration"), "max-retry-after", "longest Retry-After to wait for; a longer one ends retrying, and 0 waits for none")
	f.key = "auto"
	fs.Var(cmdutil.Text(&f.key, "auto|off|key"), "idempotency-key", "Idempotency-Key for POST and PATCH (and, given explicitly, for PUT, DELETE and other unsafe methods, so that --hedge-after hedges them): auto (random), off, or the key to send")
	f.curl.add(fs)
	budgetURL := cmdutil.AddBudgetFlag(fs)
	breakerURL := cmdutil.AddBreakerStoreFlag(fs)
	hf := addHedgeFlags(fs)
	addThrottleFlag(fs, &f.throttleK)
	addLimitFlags(fs, &f.parallel, &f.limit, &f.limitWait)
	cmdutil.AddFormat(cmd, &hf.format, cmdutil.FormatText, cmdutil.FormatJSON)
	fs.Lookup("format").Usage = "with --repeat: the summary's format, text or json (one object on stdout)"

	cmdutil.Alias(cmd, "timeout", "attempt-timeout")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		f.Env, f.Policy, f.Flags, f.Args = env, pf, fs, args
		f.BudgetURL, f.BreakerURL, f.hedge = *budgetURL, *breakerURL, hf
		return fetchRun(cmd.Context(), &f)
	}
	return cmd
}

// fetchRun validates f and sends its request, retrying it, within ctx,
// and writes the final response; or, with --repeat, sends it again and
// again and prints a summary. Its span and metrics are exported if the
// environment asks for them.
func fetchRun(ctx context.Context, f *Options) (err error) {
	env, fs, hf := f.Env, f.Flags, f.hedge
	ctx, tel := cmdutil.StartTelemetry(ctx, "fetch", env)
	defer func() { err = tel.End(ctx, err) }()
	in, err := f.Policy.ParseTimed()
	if err != nil {
		return err
	}
	base, rt, err := f.curl.transport(env)
	if err != nil {
		return err
	}
	defer base.CloseIdleConnections()
	req, tr, err := f.build(fs, f.Args, env, in)
	if err == nil {
		err = f.hedging(fs, hf, tr, rt, env)
	}
	if err == nil {
		tr.Throttles, err = throttles(fs, f.throttleK)
	}
	if err == nil {
		tr.Limits, err = limits(fs, f.limit, f.limitWait)
	}
	if err == nil {
		hf.workers, err = parallels(fs, f.parallel)
	}
	if err != nil {
		return err
	}
	defer f.closeBody()
	tr.Base = rt
	budget, closer, err := cmdutil.OpenBudget(env, "fetch", f.BudgetURL)
	var breakers *breaker.Group
	var breakerCloser io.Closer
	if err == nil {
		breakers, breakerCloser, err = cmdutil.OpenBreakers(env, "fetch", f.BreakerURL, fetchBreaker())
	}
	var out *output
	if err == nil {
		out, err = openOutput(f.output, env.Stdout)
	}
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		cmdutil.CloseBudget(closer)
		cmdutil.CloseBudget(breakerCloser)
		return err
	}
	defer cmdutil.CloseBudget(tel.BeforeClose(ctx, closer))
	defer cmdutil.CloseBudget(breakerCloser)
	tr.Budget, tr.Breakers = budget, breakers
	if in.Deadline > 0 {
		var cancel context.CancelFunc
		dl := &deadlineCause{in.Deadline}
		ctx, cancel = context.WithTimeoutCause(context.WithValue(ctx, deadlineKey{}, dl), in.Deadline, dl)
		defer cancel()
	}
	if fs.Changed("repeat") {
		return hf.run(req.WithContext(ctx), tr, f.hedges, env)
	}
	return f.fetch(req.WithContext(ctx), tr, out, env)
}

// badURL is the usage error for a URL that is not an absolute http or
// https one. Without a scheme ("localhost:8080/x", which url.Parse reads
// as the scheme "localhost"), it shows the whole input, redacted as an
// http URL would be, and the fix: fetch does not guess a scheme, since
// http:// would send a request in the clear that may have meant https.
func badURL(arg string) error {
	if !strings.Contains(arg, "://") {
		if u, err := url.Parse("http://" + arg); err == nil && u.Host != "" {
			shown := strings.TrimPrefix(retryhttp.RedactURL(u.String()), "http://")
			return cmdutil.BadValue("URL", shown, "an absolute http or https URL; write http://%s or https://%s", shown, shown)
		}
	}
	return cmdutil.BadValue("URL", retryhttp.RedactURL(arg), "an absolute http or https URL")
}

// build validates the command line and returns the request and the
// transport (without its Base).
func (f *Options) build(fs *pflag.FlagSet, args []string, env *cmdutil.Env, in calc.Input) (*http.Request, *retryhttp.Transport, error) {
	f.location = f.location || f.curl.locationTrusted // as in curl
	if len(args) != 1 {
		if len(args) == 0 {
			return nil, nil, cmdutil.Usagef("missing URL; usage: again fetch [flags] URL (see 'again fetch --help')")
		}
		return nil, nil, cmdutil.Usagef("unexpected argument %q; fetch takes one URL (see 'again fetch --help')", args[1])
	}
	u, err := url.Parse(args[0])
	if err != nil || (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")) || u.Host == "" {
		return nil, nil, badURL(args[0])
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, nil, cmdutil.BadValue("URL", retryhttp.RedactURL(args[0]), "an http or https URL with a port from 1 to 65535")
		}
	}
	tr := &retryhttp.Transport{Policy: in.Policy}
	if f.classes != nil {
		if tr.Classes, err = f.classes.ParseTimed(in.Policy); err != nil {
			return nil, nil, err
		}
	}
	if tr.AttemptTimeout, err = cmdutil.DurationFlag("attempt-timeout", f.timeout, true); err != nil {
		return nil, nil, err
	}
	if tr.MaxRetryAfter, err = cmdutil.DurationFlag("max-retry-after", f.maxRetryWait, false); err != nil {
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
	_, _, _, hasData, err := f.bodyParts(fs)
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
		return nil, nil, cmdutil.BadValue("--method", method, "an HTTP method such as GET or POST")
	}
	req, err := http.NewRequest(method, args[0], nil)
	if err != nil {
		return nil, nil, cmdutil.BadValue("URL", retryhttp.RedactURL(args[0]), "an absolute http or https URL")
	}
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		value = strings.TrimSpace(value)
		if !ok || !isToken(name) || !validHeaderValue(value) {
			return nil, nil, cmdutil.BadValue("--header", h, "'Name: value' with a valid header name and no control characters")
		}
		switch http.CanonicalHeaderKey(name) {
		case "Host":
			req.Host = value
			continue
		case "Idempotency-Key":
			if value == "" {
				// An empty (or blank) key gives the server nothing to
				// recognise a repeat by: retryhttp would treat the POST
				// as keyless (not retried, or a key generated in its
				// place), silently changing what the user wrote.
				return nil, nil, cmdutil.Usagef(`--header "Idempotency-Key:" has no value; give the key after the colon (or with --idempotency-key KEY), or leave the header out for a random key (--idempotency-key auto, the default) or none (--idempotency-key off)`)
			}
		}
		req.Header.Add(name, value)
	}
	if fs.Changed("json") {
		// As curl's --json: unless a -H says otherwise.
		for _, name := range []string{"Content-Type", "Accept"} {
			if req.Header.Get(name) == "" {
				req.Header.Set(name, "application/json")
			}
		}
	} else if (fs.Changed("data") || fs.Changed("data-raw")) && req.Header.Get("Content-Type") == "" {
		// As curl's -d: a form, unless a -H says otherwise, so that
		// servers that read forms see the data.
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if f.curl.user != "" && req.Header.Get("Authorization") != "" {
		return nil, nil, cmdutil.Usagef("--user conflicts with the Authorization header; give the credentials once")
	}
	if err := f.curl.apply(req); err != nil {
		return nil, nil, err
	}
	switch f.key {
	case "auto":
		// The library adds no key unless asked: a person asked to retry
		// this one request, so fetch asks, for a POST or a PATCH. Another
		// method that is not safe (PUT, DELETE) gets one only when
		// --idempotency-key auto is given: with --hedge-after the key is
		// what lets it be hedged, and a server that ignores keys would
		// see two at once (a DELETE's hedge answers 404).
		tr.GenerateIdempotencyKey = req.Method == http.MethodPost || req.Method == http.MethodPatch || fs.Changed("idempotency-key")
	case "off":
	default:
		if !validHeaderValue(f.key) {
			return nil, nil, cmdutil.BadValue("--idempotency-key", f.key, "auto, off or a key without control characters")
		}
		if req.Header.Get("Idempotency-Key") != "" {
			return nil, nil, cmdutil.Usagef("--idempotency-key %q conflicts with the Idempotency-Key header; give the key once", f.key)
		}
		req.Header.Set("Idempotency-Key", f.key)
	}
	// The body is opened last, so that no usage error leaves a file open.
	body, err := f.body(fs, env)
	if err != nil {
		return nil, nil, err
	}
	if body.rc != nil {
		req.Body, req.GetBody, req.ContentLength = body.rc, body.getBody, body.size
	}
	f.bodyCloser = body.close
	return req, tr, nil
}

// closeBody closes what the request body holds open, once the fetch is over.
func (f *Options) closeBody() {
	if f.bodyCloser != nil {
		_ = f.bodyCloser()
	}
}

// requestBody is the request body of fetch with how to replay it.
type requestBody struct {
	rc      io.ReadCloser
	getBody func() (io.ReadCloser, error)
	size    int64
	close   func() error // what to close when the fetch ends, if not nil
}

// body opens the body given with --data, --data-raw or --json. A single
// @FILE is opened now, to report a missing one as a usage error, and read
// anew through that descriptor by each retry (see fileBody), so it is
// never read whole into memory; stdin
// cannot be reopened, so it is read into memory when small enough to be
// retried (see readStdinBody). Several parts are joined in memory, with &
// for --data and --data-raw as curl does, or concatenated for --json.
func (f *Options) body(fs *pflag.FlagSet, env *cmdutil.Env) (requestBody, error) {
	parts, raw, sep, given, err := f.bodyParts(fs)
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
			if b.close != nil {
				defer b.close()
			}
			if b.size < 0 {
				return cmdutil.Usagef("a body part from stdin (@-) joined with others must be at most %d bytes, as the joined body is kept in memory", retryhttp.DefaultMaxBufferedBody)
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
func openPart(part string, env *cmdutil.Env) (requestBody, error) {
	switch {
	case part == "@-":
		return readStdinBody(env.Stdin)
	case !strings.HasPrefix(part, "@"):
		return stringBody(part), nil
	}
	path := part[1:]
	file, err := os.Open(path)
	if err != nil {
		return requestBody{}, cmdutil.Usagef("--data @FILE: cannot open %q: %v", path, errors.Unwrap(err))
	}
	st, err := file.Stat()
	if err != nil || !st.Mode().IsRegular() {
		file.Close()
		return requestBody{}, cmdutil.BadValue("--data", "@"+path, "@file naming a regular file")
	}
	return fileBody(file, path, st), nil
}

// fileBody is the body of -d @FILE: the file opened once, each attempt
// reading it from the start through that descriptor, so that it is never
// read whole into memory and a file renamed over the path meanwhile (an
// -o of the same name, an editor's save) does not change what is sent.
// One changed in place since it was opened (another size or modification
// time) is not sent again: the retry would send something else than the
// first attempt did. close closes the file once the fetch is over.
func fileBody(file *os.File, path string, st fs.FileInfo) requestBody {
	section := func() io.ReadCloser { return io.NopCloser(io.NewSectionReader(file, 0, st.Size())) }
	return requestBody{
		rc: section(),
		getBody: func() (io.ReadCloser, error) {
			if now, err := file.Stat(); err != nil || now.Size() != st.Size() || !now.ModTime().Equal(st.ModTime()) {
				return nil, fmt.Errorf("--data @%s changed since the first attempt read it; not sending it again", path)
			}
			return section(), nil
		},
		size:  st.Size(),
		close: file.Close,
	}
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
func (f *Options) fetch(req *http.Request, tr *retryhttp.Transport, out *output, env *cmdutil.Env) (err error) {
	// Every response RoundTrip returns is reported to OnSuccess or OnGiveUp,
	// with the attempts of its own hop (with -L each hop is a round trip).
	attempts := 1
	var last string       // the last failed attempt's outcome
	var deadlineStop bool // retrying stopped for the --deadline
	var unanswered bool   // the last attempt ended without a response
	tr.OnSuccess = func(e retryhttp.Event) { attempts = e.Attempt; f.hedges.answered(e) }
	tr.OnRetry = func(e retryhttp.Event) {
		last = outcome(e, tr.AttemptTimeout)
		wait := cmdutil.RetryingIn(e.Delay)
		switch {
		case e.HintHeader == "":
		case e.Delay > e.Hint:
			// retry floors a server's hint at the first delay, so that a
			// server answering "Retry-After: 0" to every request is not
			// retried in a hot loop: say why the wait is longer.
			wait += fmt.Sprintf(" (%s asks for %s, less than the first delay)", hintHeader(e), calc.Human(e.Hint))
		default:
			wait += " as " + hintHeader(e) + " asks"
		}
		if !f.quiet {
			cmdutil.AttemptFailed(env.Stderr, "again fetch", e.Attempt, e.MaxAttempts, outcome(e, tr.AttemptTimeout), wait)
		}
	}
	tr.OnGiveUp = func(e retryhttp.Event) {
		attempts = e.Attempt
		last = outcome(e, tr.AttemptTimeout)
		deadlineStop = e.Reason == retry.ErrDeadline
		unanswered = e.Response == nil && req.Context().Err() != nil
		if f.quiet || e.Response == nil || e.Reason == retry.ErrExhausted || e.Reason == retry.ErrDeadline && e.HintHeader == "" {
			return // the final error or status line says it all
		}
		cmdutil.AttemptFailed(env.Stderr, "again fetch", e.Attempt, e.MaxAttempts, outcome(e, tr.AttemptTimeout), f.giveUpReason(e))
	}
	client := &http.Client{Transport: instrument(req.Context(), tr), CheckRedirect: f.checkRedirect}
	// The output is kept only for a usable response whose body was
	// written whole: not for an error (with -L, a redirect loop returns
	// the last redirect with one), nor for a failed status with --fail.
	// Otherwise an -o file is left as it was, or absent.
	complete, keep := false, false
	var read *http.Response // the response ReadBody last saw
	var own error           // ReadBody's last error that is not reading the body
	defer func() {
		if cerr := out.close(keep); err == nil {
			err = cerr
		}
		err = stoppedBy(req.Context(), err)
		switch {
		case read != nil && !complete:
			last = bodyArriving
		case unanswered:
			last = noAnswerYet
		}
		err = deadlinePassed(req.Context(), err, deadlineStop, attempts, last)
	}()
	usable := func(resp *http.Response) bool {
		return !f.curl.fail || resp.StatusCode < 400
	}
	// The body of a response that ends the request is read within its
	// attempt: --attempt-timeout bounds it too, and a body cut off mid-way is
	// retried like any network failure, if the output can start over.
	tr.ReadBody = func(resp *http.Response) error {
		read, own, complete = resp, nil, false
		if own = checkStatus(resp); own != nil {
			resp.Body.Close() // a 101's is the connection, never bounded by --attempt-timeout
			return own
		}
		if f.location && followed(resp) || !usable(resp) {
			return nil // not the output: the client follows it, or --fail
		}
		err := f.write(resp, out)
		complete = err == nil
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
	// Hedged too: the Transport gives ReadBody the winner's body alone,
	// within the winner's --attempt-timeout, so that one copy writes the output
	// and a winner whose body is cut or stalls is retried.
	resp, err := client.Do(req)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		if own != nil && errors.Is(err, own) {
			return own // retry's account adds nothing to it
		}
		return requestError(req, err, tr.AttemptTimeout)
	}
	defer resp.Body.Close()
	if err := checkStatus(resp); err != nil {
		return err
	}
	if resp != read && usable(resp) {
		// A response with a status to retry, returned once retrying
		// stopped: ReadBody has not seen it.
		if err := f.write(resp, out); err != nil {
			return err
		}
		complete = true
	}
	keep = complete
	if resp.StatusCode >= 400 {
		return fmt.Errorf("server answered %s after %d attempt%s", resp.Status, attempts, plural(attempts))
	}
	return nil
}

// requestError is what fetch says of err, the error of an http.Client's Do
// for req through a retryhttp.Transport whose AttemptTimeout is timeout:
// without the URL that a *url.Error repeats (query values included), with
// any other URL quoted in it redacted, and an attempt's timeout told as
// run tells it. A single fetch and --repeat both say it so.
func requestError(req *http.Request, err error, timeout time.Duration) error {
	var oe *breaker.OpenError
	if errors.As(err, &oe) {
		// Fail fast: nothing was sent, and retry's account ("attempt
		// rejected") would not say by what, nor until when.
		return fmt.Errorf("not sent: the --breaker-store breaker of %s is open after repeated failures; next probe in %s",
			printable.String(req.URL.Host), calc.Human(oe.Wait))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its message repeats the URL, query values included
	}
	err = timeoutWords(err, timeout)
	if msg := redactQuotedURLs(err.Error()); msg != err.Error() {
		// net/http quotes URLs in its messages, such as a redirect's
		// Location that does not parse, a password included.
		return errors.New(msg)
	}
	return err
}

// stoppedBy returns err, unless a signal cancelled ctx: then, whatever err
// says (a cancelled attempt, a cut body, a retry loop that stopped), the
// error that says the signal stopped the fetch, with status 128+N. A nil
// err stays nil: what was asked for was done.
func stoppedBy(ctx context.Context, err error) error {
	if sig := cmdutil.SignalCause(ctx); sig != nil && err != nil {
		return cmdutil.Stopped(sig, "")
	}
	return err
}

// deadlineCause is the cause of the context that --deadline ends.
type deadlineCause struct{ d time.Duration }

func (c *deadlineCause) Error() string { return "the --deadline " + c.d.String() + " passed" }

// deadlineOf returns the --deadline that ends ctx, or nil if none does.
func deadlineOf(ctx context.Context) *deadlineCause {
	d, ok := context.Cause(ctx).(*deadlineCause)
	if ok {
		return d
	}
	// Not passed yet: the cause is set only once it has.
	c, _ := ctx.Value(deadlineKey{}).(*deadlineCause)
	return c
}

type deadlineKey struct{}

// What fetch says of the last attempt when the --deadline passed while it
// was in flight.
const (
	noAnswerYet  = "no answer yet to the last one"
	bodyArriving = "the response body was still arriving"
)

// deadlinePassed returns err, unless the --deadline ended the fetch:
// retrying stopped because the next attempt would not start before it
// (deadlineStop), or it passed while an attempt was in flight (ctx's
// cause). Then, as in every command, status 124 and the line that names
// the deadline, the attempts and last, the last attempt's outcome. A
// signal's stop (see stoppedBy) and a nil err stay as they are.
func deadlinePassed(ctx context.Context, err error, deadlineStop bool, attempts int, last string) error {
	var ee *cmdutil.ExitError
	dl := deadlineOf(ctx)
	if err == nil || dl == nil || errors.As(err, &ee) && ee.Code != cmdutil.ExitFailure {
		return err
	}
	if _, passed := context.Cause(ctx).(*deadlineCause); passed || deadlineStop {
		return cmdutil.DeadlinePassed(dl.d, attempts, last)
	}
	return err
}

// redactQuotedURLs returns msg with every quoted string in it that may be
// a URL (it holds "://", "@" or "?") redacted by retryhttp.RedactURL.
func redactQuotedURLs(msg string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '"')
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i])
		quoted, err := strconv.QuotedPrefix(msg[i:])
		if err != nil {
			b.WriteString(msg[i:])
			return b.String()
		}
		msg = msg[i+len(quoted):]
		if u, err := strconv.Unquote(quoted); err == nil && (strings.Contains(u, "://") || strings.ContainsAny(u, "@?")) {
			quoted = strconv.Quote(retryhttp.RedactURL(u))
		}
		b.WriteString(quoted)
	}
}

// checkStatus returns the error for a final response that is neither a
// success nor an HTTP error status: a 101 Switching Protocols, which fetch
// never asks for and whose body (the connection, in another protocol)
// would hold it for as long as the server likes, or a status outside 100
// to 599, which HTTP does not have (net/http hands back any three digits).
func checkStatus(resp *http.Response) error {
	switch {
	case resp.StatusCode == http.StatusSwitchingProtocols:
		return errors.New("server answered 101 Switching Protocols: fetch speaks only HTTP and does not follow a switch to another protocol")
	case resp.StatusCode < 100 || resp.StatusCode > 599:
		return fmt.Errorf("server answered status %03d, which HTTP does not have (statuses are 100 to 599)", resp.StatusCode)
	}
	return nil
}

// checkRedirect is the client's CheckRedirect: without -L it follows
// nothing; with it, up to 10 redirects, sending credentials (-u, and
// Authorization and Cookie headers) only while the scheme, host and port
// stay those of the URL given, as curl does since 7.83, or to any hop with
// --location-trusted. http.Client itself keeps them for another port or
// scheme of the same host, and would send a password in clear text after
// a redirect from https to http. It also adds a Referer, which fetch
// removes (see below).
func (f *Options) checkRedirect(req *http.Request, via []*http.Request) error {
	if !f.location {
		return http.ErrUseLastResponse
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	first := via[0]
	for _, name := range credentialHeaders {
		switch {
		case f.curl.locationTrusted:
			// http.Client drops them on leaving the host: put them back.
			if v := first.Header.Values(name); len(v) > 0 {
				req.Header[name] = v
			}
		case !sameOrigin(first.URL, req.URL):
			req.Header.Del(name)
		}
	}
	// http.Client sets Referer to the previous hop's URL, query (and its
	// tokens) included, unless the first request has one: curl -L sends
	// none unless asked, and neither does fetch. One given with -H goes
	// as given to the URL's origin, and without its query, fragment and
	// user information to any other, whatever --location-trusted says:
	// that flag is about credentials, not the query.
	switch given := first.Header.Values("Referer"); {
	case len(given) == 0:
		req.Header.Del("Referer")
	case !sameOrigin(first.URL, req.URL):
		req.Header.Del("Referer")
		for _, ref := range given {
			if ref = refererElsewhere(ref); ref != "" {
				req.Header.Add("Referer", ref)
			}
		}
	}
	return nil
}

// refererElsewhere is a Referer the user gave, as fetch sends it to
// another origin than the URL's: without its query, fragment and user
// information, or "" (none sent) if it does not parse.
func refererElsewhere(ref string) string {
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// credentialHeaders are the headers checkRedirect keeps to the origin.
var credentialHeaders = [...]string{"Authorization", "Cookie", "Cookie2", "Proxy-Authorization"}

// sameOrigin reports whether a and b have the same scheme, host and port,
// a missing port being the scheme's own.
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
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

// write writes the final response to the output: the status line and
// headers with --include, then the body.
func (f *Options) write(resp *http.Response, o *output) error {
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
func (f *Options) giveUpReason(e retryhttp.Event) string {
	switch {
	case e.Reason == retry.ErrRetryAfterTooLong:
		return fmt.Sprintf("giving up: %s asks for %s, more than --max-retry-after %s",
			hintHeader(e), calc.Human(e.Hint), f.maxRetryWait)
	case e.Reason == retry.ErrDeadline && e.HintHeader != "":
		return fmt.Sprintf("giving up: %s asks for %s, past the --deadline", hintHeader(e), calc.Human(e.Hint))
	case e.Reason == retry.ErrBudget:
		return cmdutil.BudgetSpent
	case errors.Is(e.Reason, retryhttp.ErrBodyTooLarge) && f.fromStdin():
		return "not retried: standard input was more than 1 MiB, too much to keep for a retry (send a file with -d @FILE instead)"
	case errors.Is(e.Reason, retryhttp.ErrNotReplayable):
		return strings.TrimPrefix(e.Reason.Error(), "retryhttp: ")
	}
	return "giving up: " + e.Reason.Error()
}

// fromStdin reports whether the body is read from stdin.
func (f *Options) fromStdin() bool {
	for _, part := range append(f.data, f.json...) {
		if part == "@-" {
			return true
		}
	}
	return false
}

// outcome is the status or the error of a failed attempt; timeout is
// --attempt-timeout.
func outcome(e retryhttp.Event, timeout time.Duration) string {
	switch {
	case e.Response != nil:
		return e.Response.Status
	case e.Err == nil:
		return "" // ReadBody's error, told by the final line
	}
	return timeoutWords(e.Err, timeout).Error()
}

// timeoutWords returns err, wrapped so that its message says of an attempt
// that --attempt-timeout (timeout) stopped what run says, "timed out after 500ms",
// rather than retryhttp's "retryhttp: attempt timed out after 500ms". err
// without such an attempt is returned as it is.
func timeoutWords(err error, timeout time.Duration) error {
	te := attemptTimeout(err)
	if te == nil {
		return err
	}
	words := "timed out"
	if timeout > 0 {
		words = cmdutil.TimedOutAfter(timeout)
	}
	return &reworded{msg: strings.ReplaceAll(err.Error(), te.Error(), words), err: err}
}

// attemptTimeout returns the innermost error of err's tree that matches
// retryhttp.ErrAttemptTimeout, or nil if none does.
func attemptTimeout(err error) error {
	if !errors.Is(err, retryhttp.ErrAttemptTimeout) {
		return nil
	}
	var inner []error
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		inner = []error{u.Unwrap()}
	case interface{ Unwrap() []error }:
		inner = u.Unwrap()
	}
	for _, e := range inner {
		if te := attemptTimeout(e); te != nil {
			return te
		}
	}
	return err
}

// reworded is an error with a message of again's own: errors.Is and
// errors.As see the error it rewords.
type reworded struct {
	msg string
	err error
}

func (e *reworded) Error() string { return e.msg }
func (e *reworded) Unwrap() error { return e.err }

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

// parseStatuses parses --retry-on: "none" or comma-separated statuses.
func parseStatuses(s string) ([]int, error) {
	if strings.TrimSpace(s) == "none" {
		return []int{}, nil
	}
	var codes []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 100 || n > 599 {
			return nil, cmdutil.BadValue("--retry-on", s, "none or a comma-separated list of HTTP statuses from 100 to 599")
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

// instrument returns tr, instrumented if ctx carries telemetry.
func instrument(ctx context.Context, tr *retryhttp.Transport) http.RoundTripper {
	t := cmdutil.TelemetryFrom(ctx)
	if t == nil {
		return tr
	}
	return t.Otel().Transport("fetch", tr)
}

// fetchBreaker is the rule of fetch's per-host breakers: a fetch makes a
// handful of attempts, far fewer than a failure ratio's minimum of calls,
// so a run of failures trips it.
func fetchBreaker() breaker.Config { return breaker.Config{ConsecutiveFailures: 3} }
