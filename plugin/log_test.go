package plugin

import "testing"

// The SDK logger is named after the adapter's discovery name.
func TestExeName(t *testing.T) {
	for in, want := range map[string]string{
		"/opt/a/thermometer_v1.0.0": "thermometer",
		"thermometer_v1.2.3.exe":    "thermometer",
		"/x/my_value_v2.0.0-beta.1": "my_value",
		"/x/echo":                   "echo",
		"/x/tool_vx":                "tool_vx",
		"/x/lifecycle.test":         "lifecycle.test",
	} {
		if got := exeName(in); got != want {
			t.Errorf("exeName(%q) = %q, want %q", in, got, want)
		}
	}
}
