package plugin

import (
	"strings"
	"testing"
	"unsafe"
)

// A result's strings longer than a batched frame are not copied into the frame: they
// are spliced in, by reference; shorter ones are copied.
func TestAppendResultSplicesLongStrings(t *testing.T) {
	long := strings.Repeat("x", smallFrame)
	type two struct{ L, S string }
	text, parts, err := appendResult(nil, two{L: long, S: "short"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(text) != `{"L":"","S":"short"}` || len(parts) != 1 || parts[0].At != len(`{"L":"`) ||
		unsafe.SliceData(parts[0].Data) != unsafe.StringData(long) {
		t.Fatalf("text %q, %d parts", text, len(parts))
	}
}
