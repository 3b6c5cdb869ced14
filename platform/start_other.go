//go:build !linux && !windows && !darwin

package platform

import (
	"context"

	"github.com/hashicorp/go-hclog"
)

// osTree is empty where no supervision is implemented; Start refuses before one exists.
type osTree struct{}

func osStart(context.Context, *Config, string, *stdio, *Tree) error { return ErrUnsupported }

func osReaped(*Tree) {}

func (*osTree) cgroupPath() string                  { return "" }
func (*osTree) kill(context.Context, *Tree) error   { return ErrUnsupported }
func (*osTree) verify(context.Context, *Tree) error { return ErrUnsupported }
func (*osTree) release(*Tree) error                 { return nil }

func osSweep(context.Context, hclog.Logger) (SweepReport, error) {
	return SweepReport{}, ErrUnsupported
}
