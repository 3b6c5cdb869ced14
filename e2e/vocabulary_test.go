package e2e

import (
	"errors"
	"fmt"
	"testing"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/runtime/wire"
)

// One error vocabulary: each concept is defined once and every package that needs the
// name re-exports that same value (docs/errors.md), so errors.Is works across layers.
func TestOneErrorVocabulary(t *testing.T) {
	for _, c := range []struct {
		name      string
		one, same error
	}{
		{"closed: platform", runtime.ErrConnClosed, platform.ErrClosed},
		{"closed: registry", runtime.ErrConnClosed, registry.ErrClosed},
		{"not absolute: discovery", platform.ErrNotAbsolute, discovery.ErrNotAbsolute},
		{"not absolute: registry", platform.ErrNotAbsolute, registry.ErrNotAbsolute},
		{"not found: discovery", platform.ErrNotFound, discovery.ErrNotFound},
		{"unsupported: platform", errors.ErrUnsupported, platform.ErrUnsupported},
		{"unsupported: controlplane", errors.ErrUnsupported, controlplane.ErrUnsupported},
		{"not a JSON object: lifecycle", runtime.ErrInvalidParams, lifecycle.ErrInvalidConfiguration},
		{"digest mismatch: discovery", platform.ErrDigestMismatch, discovery.ErrDigestMismatch},
		{"invalid digest: discovery", platform.ErrInvalidDigest, discovery.ErrInvalidDigest},
		{"not regular: discovery", platform.ErrNotRegular, discovery.ErrDigestNotRegular},
		{"frame too large: controlplane", wire.ErrFrameTooLarge, controlplane.ErrFrameOversized},
		{"frame truncated: controlplane", wire.ErrFrameTruncated, controlplane.ErrFrameTruncated},
		{"host violation: plugin", wire.ErrHostViolation, plugin.ErrViolation},
	} {
		if c.one != c.same {
			t.Errorf("%s: %q and %q are two definitions of one concept", c.name, c.one, c.same)
		}
	}
	// Wrapped forms match the one sentinel.
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"stream closed", registry.ErrStreamClosed, runtime.ErrConnClosed},
		{"client closed", controlplane.ErrClientClosed, runtime.ErrConnClosed},
		{"plugin violation", &plugin.ViolationError{Kind: wire.HostFrame}, plugin.ErrViolation},
		{"runtime violation", runtime.NewViolation(runtime.Output, nil), runtime.ErrOutputViolation},
		{"adapter violation is not the host's", runtime.NewViolation(runtime.Output, nil), nil},
	} {
		got := errors.Is(c.err, c.want)
		if c.want == nil {
			got = !errors.Is(c.err, plugin.ErrViolation)
		}
		if !got {
			t.Errorf("%s: %v does not match %v", c.name, c.err, c.want)
		}
	}
	// One type per concept: errors.As with either package's name finds the same value.
	var rv *runtime.ViolationError
	var pv *plugin.ViolationError
	var cf *controlplane.FrameError
	var wf *wire.FrameError
	var dm *discovery.DigestMismatchError
	err := fmt.Errorf("x: %w", &wire.ViolationError{Kind: wire.HostEnvelope, Err: &wire.FrameError{Err: wire.ErrFrameTruncated}})
	if !errors.As(err, &rv) || !errors.As(err, &pv) || rv != pv || !errors.As(err, &cf) || !errors.As(err, &wf) || cf != wf {
		t.Errorf("one ViolationError and one FrameError type: runtime %v plugin %v controlplane %v wire %v", rv, pv, cf, wf)
	}
	if !errors.As(fmt.Errorf("x: %w", &platform.DigestMismatchError{Path: "/a"}), &dm) || dm.Path != "/a" {
		t.Errorf("discovery.DigestMismatchError is not platform's")
	}
}
