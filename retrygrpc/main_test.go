package retrygrpc_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fast is a schedule short enough for tests on a real server: every retry
// waits at most a millisecond.
var fast = backoff.Policy{Initial: time.Millisecond, Max: time.Millisecond, Retries: 3}

// setup starts a test server and dials it through ic with grpc-go's own
// retries off, as the package documentation recommends.
func setup(t *testing.T, ic *retrygrpc.Interceptor, opts ...grpc.DialOption) (*grpctest.Server, *grpc.ClientConn) {
	t.Helper()
	srv := grpctest.Start(t)
	return srv, srv.Dial(t, append(ic.DialOptions(), opts...)...)
}
