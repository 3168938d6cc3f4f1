// Package retrygrpc retries gRPC calls.
package retrygrpc

import _ "google.golang.org/grpc"
