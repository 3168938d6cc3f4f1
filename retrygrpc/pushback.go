package retrygrpc

import (
	"math"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/retry"
)

// PushbackKey is the trailer in which a gRPC server asks its clients to
// wait before retrying (proposal A6): a whole number of milliseconds.
const PushbackKey = "grpc-retry-pushback-ms"

// Pushback is what a server's grpc-retry-pushback-ms trailer asks for, as
// ParsePushback reads it, or the retry_delay of a google.rpc.RetryInfo
// detail of the attempt's status (see RetryInfo). The zero Pushback is "no
// trailer": the retry policy decides. It is a plain value, safe to copy.
type Pushback struct {
	// Present reports that the trailer was sent.
	Present bool
	// Retry is false when the server asked not to retry at all: a negative
	// or malformed value. Meaningful only when Present.
	Retry bool
	// Wait is the wait the server asked for when Present and Retry: this
	// long before the next attempt, in place of the policy's delay, but
	// never less than the policy's first delay (see retry.After), so that
	// a server pushing back 0 ms on every call does not get a hot loop of
	// retries. Values too large for a time.Duration saturate at the
	// largest one (which MaxRetryAfter then refuses).
	Wait time.Duration
	// RetryInfo reports that Wait is, or includes, the retry_delay of a
	// google.rpc.RetryInfo status detail: Google's APIs answer
	// RESOURCE_EXHAUSTED and UNAVAILABLE with one ("wait at least
	// retry_delay, then back off from it", AIP-194). The Interceptor
	// honours it as it honours the trailer: a lower bound on the wait,
	// floored at the policy's first delay and limited by MaxRetryAfter
	// (as retryhttp honours Retry-After); and RESOURCE_EXHAUSTED with it
	// is retried as with a trailer. When a response carries both, the
	// longer wait counts, and a trailer asking not to retry wins.
	RetryInfo bool
}

// IsOverload reports whether a failed attempt's error says the server is
// overloaded: a status of RESOURCE_EXHAUSTED or UNAVAILABLE, or whatever
// retry.IsOverload matches (a breaker's or a throttle's rejection). It is
// the Match of a retry.Class of overloads in Interceptor.Classes.
func IsOverload(err error) bool {
	switch status.Code(err) {
	case codes.ResourceExhausted, codes.Unavailable:
		return true
	}
	return retry.IsOverload(err)
}

// retryInfoType is the type URL's last element of a RetryInfo detail.
const retryInfoType = "/google.rpc.RetryInfo"

// hintOf is the pushback of a failed attempt: its trailer's, or its
// status's RetryInfo, or the longer of the two. A RetryInfo whose
// retry_delay is missing, negative or not a valid duration is no hint
// (the trailer's "do not retry" has no equivalent in RetryInfo).
func hintOf(md metadata.MD, err error) Pushback {
	pb := pushbackOf(md)
	if pb.Present && !pb.Retry {
		return pb
	}
	st, ok := status.FromError(err)
	if !ok || st == nil {
		return pb
	}
	// Proto copies the status: read only the details, and decode only a
	// RetryInfo.
	for _, d := range st.Proto().GetDetails() {
		if !strings.HasSuffix(d.GetTypeUrl(), retryInfoType) {
			continue
		}
		var ri errdetails.RetryInfo
		if d.UnmarshalTo(&ri) != nil {
			continue
		}
		rd := ri.GetRetryDelay()
		if rd == nil || rd.CheckValid() != nil || rd.AsDuration() < 0 {
			continue
		}
		wait := rd.AsDuration() // saturates, as the trailer's does
		return Pushback{Present: true, Retry: true, Wait: max(wait, pb.Wait), RetryInfo: true}
	}
	return pb
}

// ParsePushback reads the grpc-retry-pushback-ms values of a response's
// trailers as proposal A6 says: a non-negative decimal integer is a wait in
// milliseconds; a negative value, or anything that is not a decimal integer
// ("", "1.5", "10ms", "+3", " 3"), means "do not retry". Of several values
// the first counts, as gRPC's own implementations read it. No value at all
// is the zero Pushback.
func ParsePushback(values []string) Pushback {
	if len(values) == 0 {
		return Pushback{}
	}
	ms, ok := parseMillis(values[0])
	if !ok {
		return Pushback{Present: true}
	}
	return Pushback{Present: true, Retry: true, Wait: ms}
}

// pushbackOf reads the pushback of trailers md without allocating: md's
// keys are already lower case.
func pushbackOf(md metadata.MD) Pushback {
	if md == nil {
		return Pushback{}
	}
	return ParsePushback(md[PushbackKey])
}

// parseMillis parses a non-negative decimal integer of milliseconds,
// saturating at the largest time.Duration. A leading minus sign, like any
// other character that is not a digit, makes it invalid: A6 treats both the
// same way.
func parseMillis(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	const maxMs = int64(math.MaxInt64 / int64(time.Millisecond))
	var ms int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if ms > maxMs {
			continue // saturated; keep checking that the rest are digits
		}
		ms = ms*10 + int64(c-'0')
	}
	if ms > maxMs {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(ms) * time.Millisecond, true
}
