// Package bench compares the retry, breaker and retrygrpc packages with
// their peers.
//
// They run side by side, each library used through its idiomatic API with
// the reusable parts (options, policies, executors) built once outside the
// loop where the library allows it: the retry package with
// github.com/cenkalti/backoff/v5 and v7, github.com/avast/retry-go/v4 and
// v5, github.com/sethvargo/go-retry and github.com/failsafe-go/failsafe-go;
// the breaker package with github.com/sony/gobreaker/v2 and failsafe-go's
// circuitbreaker; and retrygrpc with go-grpc-middleware v2's retry
// interceptors and grpc-go's own retry policy; and the shed package, on a
// server under overload, with go-zero's adaptive shedder
// (github.com/zeromicro/go-zero/core/load), Kratos aegis's BBR
// (github.com/go-kratos/aegis) and failsafe-go's failsafehttp handler.
//
// It is a separate module so that the main module's go.mod never lists the
// peers. Run it with
//
//	cd bench && go test -run '^$' -bench . -benchmem -count 5
package bench
