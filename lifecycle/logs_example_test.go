package lifecycle_test

import (
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/lifecycle"
)

// An adapter's standard error logged under the host's logger: an hclog JSON record at
// its own level with its fields, a plain line at the chosen level, escaped.
func ExampleLogWriter() {
	host := hclog.New(&hclog.LoggerOptions{Output: os.Stdout, DisableTime: true, Level: hclog.Debug})
	w := lifecycle.NewLogWriter(host.Named("thermometer"), "thermometer", hclog.Info)
	fmt.Fprintln(w, `{"@level":"warn","@message":"probe slow","@module":"thermometer","probe":"inlet"}`)
	fmt.Fprintln(w, "a plain line \x1b[31m")
	w.Close()
	// Output:
	// [WARN]  thermometer: probe slow: probe=inlet
	// [INFO]  thermometer: a plain line \x1b[31m
}
