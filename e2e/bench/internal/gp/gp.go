// Package gp is the go-plugin side of the benchmark: one echo plugin served over
// net/rpc (gob, yamux) and over gRPC (protobuf), as a go-plugin v1.8.0 user would write
// it. The host (package main of e2e/bench) and the plugin executable (cmd/gpecho) share
// these definitions.
//
// The gRPC service is written by hand, without protoc: a single unary method
// /bench.Echo/Echo whose request and reply are the well-known google.protobuf.BytesValue,
// carried by gRPC's default protobuf codec.
package gp

import (
	"context"
	"errors"
	"net/rpc"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Handshake is the handshake both sides agree on.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "ADAPTERKIT_BENCH_PLUGIN",
	MagicCookieValue: "echo",
}

// Name is the plugin's name in the plugin set.
const Name = "echo"

// Echoer is the interface the host dispenses: Echo returns p unchanged.
type Echoer interface {
	Echo(ctx context.Context, p []byte) ([]byte, error)
}

// Plugins returns the plugin set of both sides.
func Plugins() plugin.PluginSet {
	return plugin.PluginSet{Name: &EchoPlugin{}}
}

// EchoPlugin implements plugin.Plugin (net/rpc) and plugin.GRPCPlugin.
type EchoPlugin struct{}

var (
	_ plugin.Plugin     = (*EchoPlugin)(nil)
	_ plugin.GRPCPlugin = (*EchoPlugin)(nil)
)

// Server returns the net/rpc receiver, registered by go-plugin as "Plugin".
func (*EchoPlugin) Server(*plugin.MuxBroker) (any, error) { return &RPCServer{}, nil }

// Client returns the net/rpc implementation of Echoer.
func (*EchoPlugin) Client(_ *plugin.MuxBroker, c *rpc.Client) (any, error) {
	return &rpcClient{c: c}, nil
}

// GRPCServer registers the echo service.
func (*EchoPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	s.RegisterService(&echoDesc, echoImpl{})
	return nil
}

// GRPCClient returns the gRPC implementation of Echoer.
func (*EchoPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return &grpcClient{cc: cc}, nil
}

// RPCServer is the net/rpc receiver of the plugin.
type RPCServer struct{}

// Echo copies args into reply.
func (*RPCServer) Echo(args []byte, reply *[]byte) error {
	*reply = args
	return nil
}

type rpcClient struct{ c *rpc.Client }

// Echo calls Plugin.Echo. net/rpc has no context: a cancelled ctx is not sent to the
// plugin, as with any go-plugin net/rpc plugin.
func (r *rpcClient) Echo(ctx context.Context, p []byte) ([]byte, error) {
	var out []byte
	call := r.c.Go("Plugin.Echo", p, &out, make(chan *rpc.Call, 1))
	select {
	case <-call.Done:
		return out, call.Error
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// echoService is the handler type of the gRPC service.
type echoService interface {
	Echo(context.Context, *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error)
}

type echoImpl struct{}

func (echoImpl) Echo(_ context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
	return in, nil
}

const echoMethod = "/bench.Echo/Echo"

var echoDesc = grpc.ServiceDesc{
	ServiceName: "bench.Echo",
	HandlerType: (*echoService)(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "Echo", Handler: echoHandler}},
	Metadata:    "bench.proto",
}

func echoHandler(srv any, ctx context.Context, dec func(any) error, intercept grpc.UnaryServerInterceptor) (any, error) {
	in := new(wrapperspb.BytesValue)
	if err := dec(in); err != nil {
		return nil, err
	}
	s, ok := srv.(echoService)
	if !ok {
		return nil, errors.New("gp: the registered server is not an echo service")
	}
	if intercept == nil {
		return s.Echo(ctx, in)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: echoMethod}
	return intercept(ctx, in, info, func(ctx context.Context, req any) (any, error) {
		return s.Echo(ctx, req.(*wrapperspb.BytesValue))
	})
}

type grpcClient struct{ cc *grpc.ClientConn }

func (g *grpcClient) Echo(ctx context.Context, p []byte) ([]byte, error) {
	out := new(wrapperspb.BytesValue)
	if err := g.cc.Invoke(ctx, echoMethod, wrapperspb.Bytes(p), out); err != nil {
		return nil, err
	}
	return out.Value, nil
}
