//go:build !unix

package main

import (
	"os/exec"
	"runtime"
)

const isWindows = runtime.GOOS == "windows"

// setProcessGroup does nothing here: on Windows the adapter's job object contains the
// command and everything it starts.
func setProcessGroup(*exec.Cmd) {}

// killCommand kills the command.
func killCommand(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
