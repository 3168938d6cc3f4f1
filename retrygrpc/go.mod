module github.com/again-go/again/retrygrpc

go 1.25.0

require (
	github.com/again-go/again v0.1.0
	google.golang.org/grpc v1.81.1
)

require (
	go.uber.org/goleak v1.3.0
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1
	google.golang.org/protobuf v1.36.12
)
