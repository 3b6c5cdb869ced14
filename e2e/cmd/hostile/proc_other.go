//go:build !linux

package main

import (
	"errors"
	"os"
	"syscall"
)

func signal0(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Signal(syscall.Signal(0))
}

func ptraceAttach(int) error { return errors.ErrUnsupported }
