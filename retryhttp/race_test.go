//go:build race

package retryhttp_test

// raceEnabled: under the race detector sync.Pool drops some of what it is
// given, on purpose, so pooled objects are allocated again now and then.
const raceEnabled = true
