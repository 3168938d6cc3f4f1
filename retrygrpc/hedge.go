package retrygrpc

import (
	"context"

	"google.golang.org/grpc"
)

// Hedging says which unary methods are hedged, and how.
type Hedging struct {
	// Methods lists the full names of the methods that may be hedged.
	Methods []string
}

func (h *Hedging) hedges(method string) bool { return false }

func (ic *Interceptor) hedge(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts []grpc.CallOption) error {
	return nil
}
