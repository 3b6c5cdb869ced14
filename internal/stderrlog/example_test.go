package stderrlog_test

import (
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/internal/stderrlog"
)

// An adapter's standard error logged under the host's logger: an hclog JSON record at
// its own level with its fields, a plain line at the chosen level, escaped.
func Example() {
	host := hclog.New(&hclog.LoggerOptions{Output: os.Stdout, DisableTime: true, Level: hclog.Debug})
	log := host.Named("thermometer")
	w := stderrlog.New(nil, log, hclog.Info, "thermometer", stderrlog.Sink{})
	w.Start(log)
	fmt.Fprintln(w, `{"@level":"warn","@message":"probe slow","@module":"thermometer","probe":"inlet"}`)
	fmt.Fprintln(w, "a plain line \x1b[31m")
	w.Close()
	// Output:
	// [WARN]  thermometer: probe slow: probe=inlet
	// [INFO]  thermometer: a plain line \x1b[31m
}
