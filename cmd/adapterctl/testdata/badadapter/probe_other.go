//go:build !linux

package main

import "errors"

// inotify is refused where there is no inotify.
func inotify() error { return errors.New("no inotify: not Linux") }
