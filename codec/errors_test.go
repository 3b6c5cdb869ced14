package codec_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/adapterkit/adapterkit/codec"
)

// A caller outside the module finds the decode error with errors.As and errors.Is
// through its own wrapping, and reads its exported fields, although the type is
// defined in an internal package: codec.Error is that type, not a copy of it.
func TestErrorFromOutside(t *testing.T) {
	type order struct {
		SKU string `json:"sku"`
		Qty int64  `json:"qty"`
	}
	for _, c := range []struct {
		name, in, path, detail string
		known                  []string
	}{
		{"unknown member", `{"sku":"a","warehouse":1}`, "warehouse", "", []string{"sku", "qty"}},
		{"range", `{"qty":9223372036854775808}`, "qty", "9223372036854775808 does not fit int64", nil},
		{"type", `{"sku":7}`, "sku", "expected a string, got the number 7", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var o order
			err := fmt.Errorf("calling: %w", codec.DecodeValue([]byte(c.in), &o, codec.RefuseUnknown))
			var de *codec.Error
			if !errors.As(err, &de) {
				t.Fatalf("errors.As(%v, *codec.Error) = false", err)
			}
			if !errors.Is(err, codec.ErrDecode) {
				t.Errorf("errors.Is(%v, codec.ErrDecode) = false", err)
			}
			if de.Path != c.path || de.Detail != c.detail || !slices.Equal(de.Known, c.known) {
				t.Errorf("got Path %q Detail %q Known %q, want %q %q %q", de.Path, de.Detail, de.Known, c.path, c.detail, c.known)
			}
		})
	}
}

// The policies are the two values of codec.Unknown: IgnoreUnknown skips a member that
// names no field, RefuseUnknown fails on it.
func TestUnknownPolicies(t *testing.T) {
	var v struct {
		A int `json:"a"`
	}
	in := []byte(`{"a":1,"b":2}`)
	if err := codec.DecodeValue(in, &v, codec.IgnoreUnknown); err != nil || v.A != 1 {
		t.Errorf("IgnoreUnknown: %v, %+v", err, v)
	}
	if err := codec.DecodeValue(in, &v, codec.RefuseUnknown); err == nil {
		t.Error("RefuseUnknown accepted an unknown member")
	}
	var p codec.Unknown = codec.IgnoreUnknown
	if p == codec.RefuseUnknown {
		t.Error("the two policies are one value")
	}
}
