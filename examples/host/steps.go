package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/examples/console/consoleapi"
	"github.com/adapterkit/adapterkit/examples/echo/echoapi"
	"github.com/adapterkit/adapterkit/examples/thermometer/device"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// slowTimeout is how long the demo lets the thermometer's "slow" probe run before it
// gives up: the adapter then receives a cancel.
const slowTimeout = 200 * time.Millisecond

// thermometer binds a typed client of the example.device contract, reads "inlet", and
// gives up on "slow" after a short timeout.
func (d *demo) thermometer() {
	const step = "thermometer"
	h, label, err := d.open("thermometer@>= 1.0")
	if err != nil {
		d.fail(step, err)
		return
	}
	dev, err := registry.NewClient(h, device.Service)
	if err != nil {
		d.fail(label, err)
		return
	}
	r, err := registry.Call(d.ctx, dev, device.Read, device.ReadParams{Probe: "inlet"})
	if err != nil {
		d.fail(label, err)
		return
	}
	d.say("%s: inlet reads %.1f °C", label, r.Celsius)

	ctx, cancel := context.WithTimeout(d.ctx, slowTimeout)
	defer cancel()
	_, err = registry.Call(ctx, dev, device.Read, device.ReadParams{Probe: "slow"})
	var ce *runtime.CallError
	if !errors.As(err, &ce) || runtime.CodeOf(err) != wire.CodeDeadline {
		d.fail(label, fmt.Errorf("slow read: want a deadline error, got %v", err))
		return
	}
	d.say("%s: slow read given up after %v: code=%s uncertain=%t (cancel sent)", label, slowTimeout, ce.Code, ce.Uncertain)
}

// echo makes the echo adapter answer with an error and shows it typed.
func (d *demo) echo() {
	h, label, err := d.open("echo")
	if err != nil {
		d.fail("echo", err)
		return
	}
	c, err := registry.NewClient(h, echoapi.Service)
	if err != nil {
		d.fail(label, err)
		return
	}
	_, err = registry.Call(d.ctx, c, echoapi.Fail, echoapi.FailParams{Code: "denied", Message: "not for you"})
	var ce *runtime.CallError
	if !errors.As(err, &ce) || runtime.CodeOf(err) != wire.CodeDenied {
		d.fail(label, fmt.Errorf("fail: want a denied error, got %v", err))
		return
	}
	d.say("%s: fail answered code=%s message=%q uncertain=%t", label, ce.Code, ce.Message, ce.Uncertain)
}

// console runs echo(1) in the console adapter, by absolute path and without a shell,
// and reads its output as a polled stream until eof.
func (d *demo) console() {
	h, label, err := d.open("console")
	if err != nil {
		d.fail("console", err)
		return
	}
	echo, err := exec.LookPath("echo")
	if err == nil {
		echo, err = filepath.Abs(echo)
	}
	if err != nil {
		d.fail(label, fmt.Errorf("no echo command to run: %w", err))
		return
	}
	c, err := registry.NewClient(h, consoleapi.Service)
	if err != nil {
		d.fail(label, err)
		return
	}
	const text = "hello from console"
	started, err := registry.Call(d.ctx, c, consoleapi.Start, consoleapi.StartParams{Command: echo, Args: []string{text}})
	if err != nil {
		d.fail(label, err)
		return
	}
	st := registry.NewStream(d.ctx, c, consoleapi.Read, func(n int, wait time.Duration) consoleapi.ReadParams {
		return consoleapi.ReadParams{Session: started.Session, MaxBytes: n, WaitMS: wait.Milliseconds()}
	})
	out, err := io.ReadAll(st)
	st.Close()
	if _, cerr := registry.Call(d.ctx, c, consoleapi.Close, consoleapi.SessionParams(started)); err == nil {
		err = cerr
	}
	if err != nil {
		d.fail(label, err)
		return
	}
	got := string(bytes.TrimRight(out, "\r\n"))
	if got != text {
		d.fail(label, fmt.Errorf("%s printed %q, want %q", echo, got, text))
		return
	}
	d.say("%s: %s printed %q (streamed until eof)", label, echo, got)
}

// sdkEcho is the part of service example.echo version 1 that the echo adapters of the
// language SDKs (sdk/) implement: not the Go adapter's record, blob and exact methods.
// NewClient checks that the adapter advertises every method of a contract, so this host
// declares the part it calls.
var (
	sdkEcho     = contract.NewService("example.echo", 1)
	sdkEchoText = contract.NewMethod[echoText, echoText](sdkEcho, "echo")
)

// echoText is the params and result of example.echo.echo as this host uses it: the
// method returns its params unchanged.
type echoText struct {
	Text string `json:"text"`
}

// sdkEchoes are the echo adapters written with the language SDKs (sdk/), each called
// when `make adapters` could build it: by name, and the language its text names.
var sdkEchoes = []struct{ name, language string }{
	{"pyecho", "python"}, {"tsecho", "typescript"}, {"rsecho", "rust"},
}

// sdkEcho calls the echo adapter name, written with the language SDK of language.
func (d *demo) sdkEcho(name, language string) {
	h, label, err := d.open(name)
	if err != nil {
		d.fail(name, err)
		return
	}
	c, err := registry.NewClient(h, sdkEcho)
	if err != nil {
		d.fail(label, err)
		return
	}
	text := "hello from " + language
	res, err := registry.Call(d.ctx, c, sdkEchoText, echoText{Text: text})
	if err != nil {
		d.fail(label, err)
		return
	}
	if res.Text != text {
		d.fail(label, fmt.Errorf("echo returned %q", res.Text))
		return
	}
	d.say("%s: echo(%q) = %q", label, text, res.Text)
}
