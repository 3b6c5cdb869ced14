package main

import (
	"strings"
	"testing"
)

// -v and --log-level show the adapter's stderr attributed to it: the records of the
// logger plugin gives adapters at their level, under the adapter's name.
func TestVerboseAdapterLogs(t *testing.T) {
	thermo := good("thermometer_v1.0.0")
	read := []string{"example.device.read", `{"probe":"inlet"}`}
	tests := []struct {
		name    string
		args    []string
		code    int
		want    []string
		notWant []string
	}{
		{"call quiet by default", append([]string{"call", thermo}, read...), ExitOK, nil, []string{"reading"}},
		{"call -v", append([]string{"call", "-v", thermo}, read...), ExitOK, []string{"[INFO]  thermometer: reading: pid=", "probe=inlet"}, nil},
		{"call --log-level warn hides info", append([]string{"call", "--log-level", "warn", thermo}, read...), ExitOK, nil, []string{"reading"}},
		{"inspect -v", []string{"inspect", "-v", thermo}, ExitOK, nil, []string{"reading"}},
		{"check -v", []string{"check", "-v", thermo}, ExitOK, []string{"[INFO]  thermometer: reading: probe="}, nil},
		{"bad level", append([]string{"call", "--log-level", "loud", thermo}, read...), ExitUsage, []string{`--log-level "loud"`}, nil},
		{"-v with --adapter-stderr", append([]string{"call", "-v", "--adapter-stderr", thermo}, read...), ExitUsage, []string{"--adapter-stderr"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, "", tt.args...)
			r.want(t, tt.code, nil, tt.want)
			for _, s := range tt.notWant {
				if strings.Contains(r.stderr, s) {
					t.Errorf("stderr has %q:\n%s", s, r.stderr)
				}
			}
		})
	}
}
