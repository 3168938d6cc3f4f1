package retrygrpc

// A stream attempt is throttled as a unary attempt is: it asks its key's
// Admitter in Interceptor.Throttles before the breaker and before the
// stream is opened, and reports its outcome once, at the moment the
// breaker records it (stream.record). That moment is the stream's commit
// or the attempt's failure before it:
//
//   - a failure before the stream commits (opening it fails, or the first
//     RecvMsg or Header meets a status before any response) is an overload
//     signal if its code is RESOURCE_EXHAUSTED or UNAVAILABLE, or the
//     breaker refused the attempt, and an accept otherwise;
//   - a stream that commits (its first message or its headers reached the
//     caller, or it ended cleanly) is an accept, and nothing after the
//     commit is reported: the backend took the stream in, and a status at
//     the end of a long stream says little about its load when the stream
//     was admitted. A Throttler's window counts each stream once, as it
//     counts each unary attempt once, so a stream cannot weigh more than
//     a call however long it lives.

// admitAttempt asks the stream's Admitter, if any, for its next attempt,
// and keeps it to be settled by settleAttempt. It returns the refused
// attempt's outcome and false if the attempt may not be made. recvMu is
// held, or the stream is not yet returned.
func (s *stream) admitAttempt() (outcome, bool) {
	adm, o, ok := s.ic.admit(s.ctx, s.cc, s.method)
	s.adm = adm
	return o, ok
}

// settleAttempt reports o to the Admitter of the current attempt, once.
// recvMu is held, or the stream is not yet returned.
func (s *stream) settleAttempt(o outcome) {
	if adm := s.adm; adm != nil {
		s.adm = nil
		settle(adm, o)
	}
}
