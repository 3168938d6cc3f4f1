package fetch

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/printable"
	"github.com/again-go/again/retryhttp"
	"github.com/spf13/pflag"
)

// curlFlags are the flags of `again fetch` that mean what they mean in
// curl, beyond the request itself.
type curlFlags struct {
	fail, verbose   bool
	locationTrusted bool
	user, cacert    string
	connectTimeout  string
}

func (c *curlFlags) add(fs *pflag.FlagSet) {
	fs.BoolVarP(&c.fail, "fail", "f", false, "write no body when the final status is 400 or more (the -o file is left as without a response)")
	fs.VarP(cmdutil.Text(&c.user, "user:password"), "user", "u", "HTTP basic authentication (sent after a redirect only to the same scheme, host and port)")
	fs.BoolVar(&c.locationTrusted, "location-trusted", false, "with -L, send -u and the Authorization and Cookie headers to every host redirected to, as curl does")
	fs.BoolVarP(&c.verbose, "verbose", "v", false, "print each attempt's request and response headers on stderr (credentials, cookies, keys, tokens and query values masked)")
	fs.Var(cmdutil.Text(&c.cacert, "file"), "cacert", cmdutil.CACertHelp)
	fs.Var(cmdutil.Text(&c.connectTimeout, "duration"), "connect-timeout", "limit on each connection's setup, TCP and TLS handshake (default none; a failed connection is retried)")
}

// apply adds basic authentication to req.
func (c *curlFlags) apply(req *http.Request) error {
	if c.user == "" {
		return nil
	}
	// The value is never echoed: it holds a password.
	user, password, ok := strings.Cut(c.user, ":")
	if !ok {
		// curl would prompt for the password; a retrying tool in a script
		// must not wait for a person.
		return cmdutil.Usagef("--user: want user:password; fetch never prompts for a password")
	}
	if user == "" {
		return cmdutil.Usagef("--user: want user:password with a user name before the ':'")
	}
	req.SetBasicAuth(user, password)
	return nil
}

// transport returns the base transport: http.DefaultTransport's settings,
// with --cacert's authorities, and -v's logging of every attempt.
func (c *curlFlags) transport(env *cmdutil.Env) (*http.Transport, http.RoundTripper, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	connect, err := cmdutil.DurationFlag("connect-timeout", c.connectTimeout, true)
	if err != nil {
		return nil, nil, err
	}
	if connect > 0 {
		// http.DefaultTransport's dialer, with the limit; the TLS handshake
		// is part of connecting too, as in curl.
		base.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
		base.TLSHandshakeTimeout = connect
	}
	pool, err := cmdutil.CACerts(c.cacert)
	if err != nil {
		return nil, nil, err
	}
	if pool != nil {
		base.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	if !c.verbose {
		return base, base, nil
	}
	return base, &verboseTransport{base: base, w: env.Stderr}, nil
}

// verboseTransport prints each attempt's request and response headers, as
// curl -v does: "> " for what is sent, "< " for what arrives.
type verboseTransport struct {
	base http.RoundTripper
	mu   sync.Mutex // one attempt's lines at a time
	w    io.Writer
}

func (v *verboseTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// The request is printed once its headers are written, with the
	// protocol of the connection that took it (HTTP/2 on a connection
	// that negotiated h2), or, if none took it, when RoundTrip returns.
	var (
		mu      sync.Mutex
		proto   = "HTTP/1.1"
		printed bool
	)
	printRequest := func() {
		mu.Lock()
		defer mu.Unlock()
		if printed {
			return
		}
		printed = true
		var b bytes.Buffer
		target := retryhttp.RedactURL(req.URL.RequestURI())
		fmt.Fprintf(&b, "> %s %s %s\n> Host: %s\n", req.Method, target, proto, req.Host)
		if req.Host == "" {
			b.Truncate(b.Len() - len("> Host: \n"))
			fmt.Fprintf(&b, "> Host: %s\n", req.URL.Host)
		}
		writeHeaders(&b, "> ", req.Header)
		b.WriteString(">\n")
		v.print(b.Bytes())
	}
	trace := &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if tc, ok := info.Conn.(interface{ ConnectionState() tls.ConnectionState }); ok && tc.ConnectionState().NegotiatedProtocol == "h2" {
				mu.Lock()
				proto = "HTTP/2"
				mu.Unlock()
			}
		},
		WroteHeaders: printRequest,
	}
	resp, err := v.base.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	printRequest()
	if resp != nil && resp.Request != nil && resp.Request.Context() != req.Context() {
		resp.Request = req // the caller's, not the traced copy
	}
	if err != nil {
		v.print([]byte("* " + printable.String(err.Error()) + "\n"))
		return resp, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "< %s %s\n", resp.Proto, printable.String(resp.Status))
	writeHeaders(&b, "< ", resp.Header)
	b.WriteString("<\n")
	v.print(b.Bytes())
	return resp, nil
}

func (v *verboseTransport) print(p []byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, _ = v.w.Write(p)
}

// shownValue is what -v prints of the value of the header name:
// "(masked)" for a credential (see masked), the URLs of Location,
// Content-Location, Referer, Link and Refresh redacted by retryhttp.RedactURL (no
// password or query value), and control characters written out.
func shownValue(name, value string) string {
	switch http.CanonicalHeaderKey(name) {
	case "Location", "Content-Location", "Referer":
		value = retryhttp.RedactURL(value)
	case "Link":
		value = redactLink(value)
	case "Refresh":
		value = redactRefresh(value)
	default:
		if masked(name) {
			return "(masked)"
		}
	}
	return printable.String(value)
}

// secretWords are what a header name holds, whatever its case, when -v
// hides its value: Authorization, Cookie and Set-Cookie, but also
// X-Api-Key, Private-Token, X-Auth-Token, X-Session-Id, X-Amz-Signature
// and the like, whose values are credentials as much.
var secretWords = [...]string{"token", "key", "secret", "auth", "session", "password", "passwd", "cookie", "signature", "credential"}

// masked reports whether -v hides the value of the header name:
// credentials, cookies, keys and tokens.
func masked(name string) bool {
	name = strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// redactRefresh returns a Refresh header's value ("5; url=/next?t=x", as
// browsers read it) with its URL redacted: everything after the delay and
// its separator, with or without "url=" and quotes, is taken as the URL.
func redactRefresh(v string) string {
	i := strings.IndexAny(v, ";,")
	if i < 0 {
		return v // a delay alone
	}
	head, rest := v[:i+1], v[i+1:]
	lead := len(rest) - len(strings.TrimLeft(rest, " \t"))
	head, rest = head+rest[:lead], rest[lead:]
	if len(rest) >= 4 && strings.EqualFold(rest[:4], "url=") {
		head, rest = head+rest[:4], rest[4:]
	}
	if q := strings.TrimLeft(rest, " \t"); q != "" && (q[0] == '"' || q[0] == '\'') {
		head += rest[:len(rest)-len(q)+1]
		if u, ok := strings.CutSuffix(q[1:], q[:1]); ok {
			return head + retryhttp.RedactURL(u) + q[:1]
		}
		return head + retryhttp.RedactURL(q[1:])
	}
	return head + retryhttp.RedactURL(rest)
}

// redactLink returns a Link header's value with each URL in it redacted:
// those between <>, and those quoted in its parameters (anchor="...").
func redactLink(v string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(v, '<')
		if i < 0 {
			b.WriteString(redactQuotedURLs(v))
			return b.String()
		}
		b.WriteString(redactQuotedURLs(v[:i+1]))
		v = v[i+1:]
		j := strings.IndexByte(v, '>')
		if j < 0 {
			b.WriteString(retryhttp.RedactURL(v))
			return b.String()
		}
		b.WriteString(retryhttp.RedactURL(v[:j]))
		b.WriteByte('>')
		v = v[j+1:]
	}
}

func writeHeaders(b *bytes.Buffer, prefix string, h http.Header) {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, value := range h[name] {
			fmt.Fprintf(b, "%s%s: %s\n", prefix, name, shownValue(name, value))
		}
	}
}

var _ http.RoundTripper = (*verboseTransport)(nil)

// bodyParts reads the request body flags: -d (repeated: joined with &),
// --data-raw (likewise), --json (repeated: concatenated). It returns the
// parts and how to join them, and whether a body was given at all.
func (f *Options) bodyParts(fs *pflag.FlagSet) (parts []string, raw bool, sep string, given bool, err error) {
	n := 0
	for _, name := range []string{"data", "data-raw", "json"} {
		if fs.Changed(name) {
			n++
		}
	}
	switch {
	case n > 1:
		return nil, false, "", false, cmdutil.Usagef("--data, --data-raw and --json are exclusive; give the body with one of them")
	case fs.Changed("data"):
		return f.data, false, "&", true, nil
	case fs.Changed("data-raw"):
		return f.dataRaw, true, "&", true, nil
	case fs.Changed("json"):
		return f.json, false, "", true, nil
	}
	return nil, false, "", false, nil
}

// readStdinBody reads standard input as a request body: into memory, so
// that it is sent with its length and can be retried, when it is at most
// retryhttp.DefaultMaxBufferedBody bytes; otherwise the bytes read, then
// the rest, streamed once (the Transport then says why it does not retry).
func readStdinBody(stdin io.Reader) (requestBody, error) {
	if stdin == nil {
		return stringBody(""), nil
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(stdin, retryhttp.DefaultMaxBufferedBody+1)); err != nil {
		return requestBody{}, fmt.Errorf("reading standard input: %w", err)
	}
	if buf.Len() <= retryhttp.DefaultMaxBufferedBody {
		return stringBody(buf.String()), nil
	}
	return requestBody{rc: io.NopCloser(io.MultiReader(&buf, stdin)), size: -1}, nil
}
