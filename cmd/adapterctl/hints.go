package main

import (
	"errors"
	goruntime "runtime"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// outputHint is the hint for an adapter whose output violated the protocol.
const outputHint = "an adapter writes nothing but frames to stdout (docs/protocol.md#r6); 'adapterctl check ADAPTER' tests it rule by rule"

// hintFor says what to do about err, when adapterctl knows: every error should say
// what happened and what to do. "" when the error says enough.
func hintFor(err error) string {
	var nf *discovery.NotFoundError
	var ve *wire.ViolationError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, runtime.ErrUnknownMethod):
		return "'adapterctl inspect ADAPTER' lists the methods the adapter advertises"
	case errors.As(err, &nf) && len(nf.RejectedFor()) == 0:
		return "'adapterctl list DIR' shows every adapter found and why any other file was not taken"
	case errors.Is(err, platform.ErrNotExecutable):
		if goruntime.GOOS == "windows" {
			return "only an explicit .exe is launched: no .bat, .cmd or shortcut"
		}
		return "make the file executable (chmod +x FILE); a script needs a #! line"
	case errors.As(err, &ve) && ve.Kind == wire.Output:
		return outputHint
	}
	if h := nodeModuleHint(err); h != "" {
		return h
	}
	return pythonPrefixHint(err)
}
