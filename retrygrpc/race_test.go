//go:build race

package retrygrpc_test

// raceEnabled: the race detector makes sync.Pool drop a quarter of what
// it is given, so allocation counts are not the program's own.
const raceEnabled = true
