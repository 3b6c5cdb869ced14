// Command adapter is go-plugin's KV plugin ported to adapterkit: service example.kv
// version 1 (examples/kv/kvapi), which keeps each value in a file "kv_KEY" of the
// directory the host names in its configuration ({"dir": "/abs/dir"}), never in its
// working directory (the discovery directory, where other adapters live: see
// docs/protocol.md, "The working directory").
package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/adapterkit/adapterkit/examples/kv/kvapi"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

// store is the adapter's state: its configuration, set once by initialize.
type store struct{ cfg kvapi.Config }

// check refuses a configuration without an absolute, existing directory.
func (s *store) check(context.Context) error {
	if !filepath.IsAbs(s.cfg.Dir) {
		return plugin.Errorf(wire.CodeInvalid, "configuration: dir must be an absolute directory, not %q", s.cfg.Dir)
	}
	if fi, err := os.Stat(s.cfg.Dir); err != nil || !fi.IsDir() {
		return plugin.Errorf(wire.CodeInvalid, "configuration: dir %q is not a directory", s.cfg.Dir)
	}
	return nil
}

// file returns the file of key, refusing keys that would name another directory.
func (s *store) file(key string) (string, error) {
	if key == "" || strings.ContainsAny(key, `/\`) || key == "." || key == ".." {
		return "", plugin.Errorf(wire.CodeInvalid, "key must be a non-empty name without path separators")
	}
	return filepath.Join(s.cfg.Dir, "kv_"+key), nil
}

func (s *store) put(_ context.Context, p kvapi.PutParams) (struct{}, error) {
	f, err := s.file(p.Key)
	if err != nil {
		return struct{}{}, err
	}
	return struct{}{}, os.WriteFile(f, p.Value, 0o644)
}

func (s *store) get(_ context.Context, p kvapi.GetParams) (kvapi.GetResult, error) {
	f, err := s.file(p.Key)
	if err != nil {
		return kvapi.GetResult{}, err
	}
	b, err := os.ReadFile(f)
	if errors.Is(err, fs.ErrNotExist) {
		return kvapi.GetResult{}, plugin.Errorf(wire.CodeInvalid, "no value for key %q", p.Key)
	}
	return kvapi.GetResult{Value: b}, err
}

func newAdapter() *plugin.Adapter {
	s := &store{}
	svc := plugin.ServiceOf(kvapi.Service)
	plugin.Implement(svc, kvapi.Put, s.put)
	plugin.Implement(svc, kvapi.Get, s.get)
	return &plugin.Adapter{Services: []*plugin.Service{svc}, Configuration: &s.cfg, OnInitialize: s.check}
}

func main() { plugin.Main(newAdapter()) }
