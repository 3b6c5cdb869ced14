//go:build !linux && !windows && !darwin

package platform

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/hashicorp/go-hclog"
)

// errNoSupervision wraps ErrUnsupported (errors.ErrUnsupported) with what is missing.
var errNoSupervision = fmt.Errorf("platform: no process tree supervision on %s: %w", runtime.GOOS, errors.ErrUnsupported)

// osTree is empty where no supervision is implemented; Start refuses before one exists.
type osTree struct{}

func osStart(context.Context, *Config, string, *stdio, *Tree) error { return errNoSupervision }

func osReaped(*Tree) {}

func (*osTree) cgroupPath() string                  { return "" }
func (*osTree) kill(context.Context, *Tree) error   { return errNoSupervision }
func (*osTree) verify(context.Context, *Tree) error { return errNoSupervision }
func (*osTree) release(*Tree) error                 { return nil }

func osSweep(context.Context, hclog.Logger) (SweepReport, error) {
	return SweepReport{}, errNoSupervision
}
