package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// SameJSON reports whether two JSON texts are the same value: objects member by member
// in any order, numbers by their exact decimal value (1e21 and 1000000000000000000000
// are the same; 2^53 and 2^53+1 are not, though float64 cannot tell them apart). An
// error says which text is not JSON.
func SameJSON(a, b []byte) (bool, error) {
	x, err := decodeNumbers(a)
	if err != nil {
		return false, err
	}
	y, err := decodeNumbers(b)
	if err != nil {
		return false, err
	}
	return sameValue(x, y), nil
}

func decodeNumbers(p []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(p))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("%.80q: %w", p, err)
	}
	return v, nil
}

func sameValue(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		x, okx := new(big.Rat).SetString(string(a))
		y, oky := new(big.Rat).SetString(string(b))
		return okx && oky && x.Cmp(y) == 0
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameValue(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// Vectors decodes the shared conformance vectors testdata/conformance/NAME (at the
// module's root, found from the test's directory) into doc, a pointer to a struct with
// a Cases slice; the test fails when the file cannot be read or holds no cases.
func Vectors(t testing.TB, name string, doc any) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	b, err := os.ReadFile(filepath.Join(dir, "testdata", "conformance", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if c := reflect.ValueOf(doc).Elem().FieldByName("Cases"); !c.IsValid() || c.Len() == 0 {
		t.Fatalf("%s: no cases", name)
	}
}
