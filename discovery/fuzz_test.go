package discovery

import (
	"errors"
	"testing"
)

func FuzzParseFileName(f *testing.F) {
	for _, s := range []string{
		"thermo_v1.2.3", "thermo_v1.2.3.exe", "x_v1.0.0-rc.1+b.2", "x_v1.0.0+build.exe",
		"Thermo_v1", "x_v01.2.3", "_v", ".exe", "a-b_v0.0.0-0.a-.-", "x_v1.2.3-\x00",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, base string, windows bool) {
		goos := "linux"
		if windows {
			goos = "windows"
		}
		name, v, err := ParseFileName(base, goos)
		if err != nil {
			var rej *Rejected
			if !errors.As(err, &rej) {
				t.Fatalf("error is not *Rejected: %v", err)
			}
			switch rej.Reason {
			case BadName, BadVersion, WrongOSExtension:
			default:
				t.Fatalf("unexpected reason %v", rej.Reason)
			}
			return
		}
		if !validName(name) || v == nil {
			t.Fatalf("accepted invalid parts %q %v", name, v)
		}
		// The canonical name round-trips to the same adapter, and is the
		// input itself up to the letter case of ".exe".
		again, err := fileName(name, v, goos)
		if err != nil {
			t.Fatalf("fileName(%q, %v): %v", name, v, err)
		}
		stem, _ := cutExe(base)
		againStem, _ := cutExe(again)
		if stem != againStem {
			t.Fatalf("round trip changed %q into %q", base, again)
		}
		name2, v2, err := ParseFileName(again, goos)
		if err != nil || name2 != name || !v2.Equal(v) || v2.String() != v.String() {
			t.Fatalf("round trip of %q: %q %v %v", again, name2, v2, err)
		}
	})
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{
		"thermo", "thermo@~> 1.2", "x@>= 2, < 3", "x@1.4.0", "x@>= 1.0.0-beta", "@", "x@", "x@@", "a@b@c", "", "X",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ref, err := ParseRef(s)
		if err != nil {
			var re *RefError
			if !errors.As(err, &re) || re.Raw != s {
				t.Fatalf("error is not a *RefError for the input: %v", err)
			}
			if !errors.Is(err, ErrRefName) && !errors.Is(err, ErrRefConstraint) {
				t.Fatalf("error has no reason: %v", err)
			}
			return
		}
		if !validName(ref.Name) || ref.Raw != s || ref.String() != s {
			t.Fatalf("accepted %q as %+v", s, ref)
		}
		if ref.Constraints == nil {
			if ref.Name != s {
				t.Fatalf("%q: no constraints but name %q", s, ref.Name)
			}
			return
		}
		// The constraints print in a form ParseRef reads back equal.
		again, err := ParseRef(ref.Name + "@" + ref.Constraints.String())
		if err != nil {
			t.Fatalf("reparse of %q: %v", s, err)
		}
		if again.Name != ref.Name || !again.Constraints.Equals(ref.Constraints) {
			t.Fatalf("reparse of %q gave %+v", s, again)
		}
	})
}
