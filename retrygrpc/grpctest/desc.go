package grpctest

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// handlerIface is the interface RegisterService checks the implementation
// against.
type handlerIface interface {
	unary(context.Context, *wrapperspb.StringValue) (*wrapperspb.StringValue, error)
}

// serviceDesc is what protoc-gen-go-grpc would generate for
//
//	service Test {
//	  rpc Unary(StringValue) returns (StringValue);
//	  rpc Stream(StringValue) returns (stream StringValue);
//	  rpc Bidi(stream StringValue) returns (stream StringValue);
//	}
var serviceDesc = grpc.ServiceDesc{
	ServiceName: "grpctest.Test",
	HandlerType: (*handlerIface)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Unary",
		Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.StringValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			if interceptor == nil {
				return srv.(*Server).unary(ctx, in)
			}
			// As generated code does, so that server interceptors run.
			info := &grpc.UnaryServerInfo{Server: srv, FullMethod: Unary}
			return interceptor(ctx, in, info, func(ctx context.Context, req any) (any, error) {
				return srv.(*Server).unary(ctx, req.(*wrapperspb.StringValue))
			})
		},
	}},
	Streams: []grpc.StreamDesc{{
		StreamName:    "Stream",
		ServerStreams: true,
		Handler: func(srv any, ss grpc.ServerStream) error {
			in := new(wrapperspb.StringValue)
			if err := ss.RecvMsg(in); err != nil {
				return err
			}
			return srv.(*Server).serverStream(in, ss)
		},
	}, {
		StreamName:    "Bidi",
		ServerStreams: true,
		ClientStreams: true,
		Handler: func(srv any, ss grpc.ServerStream) error {
			return srv.(*Server).bidi(ss)
		},
	}},
}
