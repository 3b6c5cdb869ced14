package controlplane

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/registry"
)

// FuzzDecodeState: the state file decoder never panics, refuses with ErrState, and
// what it accepts is a record of clean absolute paths and lower-case digests that
// encodes and decodes to itself.
func FuzzDecodeState(f *testing.F) {
	f.Add([]byte(`{"version":1,"refused":[]}`))
	f.Add([]byte(`{"version":1,"refused":[{"name":"upg","version":"1.5.0","path":"/x/upg_v1.5.0","size":1,"mod_time":"2026-01-01T00:00:00Z","sha256":"` +
		strings.Repeat("ab", 32) + `","at":"2026-01-01T00:00:00Z","reason":"r","pin":true}]}`))
	f.Add([]byte(`{"version":1,"refused":[{"name":"upg","path":"x"}]}`))
	f.Add([]byte(`{"version":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		list, err := decodeState("/s/refused.json", b)
		if err != nil {
			if !errors.Is(err, ErrState) {
				t.Fatalf("error %v is not ErrState", err)
			}
			return
		}
		for _, rf := range list {
			if !filepath.IsAbs(rf.Path) || filepath.Clean(rf.Path) != rf.Path || len(rf.SHA256) != 64 || strings.ToLower(rf.SHA256) != rf.SHA256 {
				t.Fatalf("accepted %+v", rf)
			}
		}
		again, err := json.Marshal(stateDoc{Version: stateVersion, Refused: list})
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeState("/s/refused.json", again)
		if err != nil || !slices.EqualFunc(back, list, func(a, b registry.Refusal) bool {
			return a.Path == b.Path && a.SHA256 == b.SHA256 && a.At.Equal(b.At) && a.ModTime.Equal(b.ModTime) && a.Name == b.Name && a.Reason == b.Reason
		}) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, list, back)
		}
	})
}
