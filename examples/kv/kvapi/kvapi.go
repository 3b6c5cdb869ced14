// Package kvapi is the contract of service example.kv version 1, go-plugin's classic
// KV example ported to adapterkit (docs/go-plugin.md): declared once, imported by the
// adapter (examples/kv/adapter) and by the host (examples/kv/host). It takes the place
// of go-plugin's shared interface package: the KV interface, and the typed client that
// go-plugin's RPCClient/GRPCClient were.
package kvapi

import (
	"context"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/registry"
)

// Config is the adapter's configuration, sent in initialize.
type Config struct {
	// Dir is the absolute directory the adapter keeps its values in (one file per
	// key), chosen by the host: not the adapter's working directory.
	Dir string `json:"dir"`
}

// PutParams are the params of example.kv.put.
type PutParams struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

// GetParams are the params of example.kv.get.
type GetParams struct {
	Key string `json:"key"`
}

// GetResult is the result of example.kv.get.
type GetResult struct {
	Value []byte `json:"value"`
}

// Service and its methods.
var (
	Service = contract.NewService("example.kv", 1)
	Put     = contract.NewMethod[PutParams, struct{}](Service, "put")
	Get     = contract.NewMethod[GetParams, GetResult](Service, "get")
)

// KV is the interface go-plugin's example shares between host and plugin.
type KV interface {
	Put(ctx context.Context, key string, value []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
}

// Client is KV over an adapter: what the host calls.
type Client struct{ c *registry.Client }

var _ KV = (*Client)(nil)

// NewClient binds a client to the adapter h, checking its catalog against Service.
func NewClient(h registry.Caller) (*Client, error) {
	c, err := registry.NewClient(h, Service)
	if err != nil {
		return nil, err
	}
	return &Client{c}, nil
}

// Put stores value under key.
func (k *Client) Put(ctx context.Context, key string, value []byte) error {
	_, err := registry.Call(ctx, k.c, Put, PutParams{Key: key, Value: value})
	return err
}

// Get returns the value stored under key.
func (k *Client) Get(ctx context.Context, key string) ([]byte, error) {
	r, err := registry.Call(ctx, k.c, Get, GetParams{Key: key})
	return r.Value, err
}
