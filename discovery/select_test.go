package discovery

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"
)

// result builds a Result holding name at each of versions, deliberately
// unsorted: Select and Lookup must not depend on the order.
func result(name string, versions ...string) *Result {
	r := &Result{}
	for _, v := range versions {
		r.Adapters = append(r.Adapters, Adapter{Name: name, Version: version.Must(version.NewSemver(v)), Path: "/a/" + name + "_v" + v, Dir: "/a"})
	}
	r.Adapters = append(r.Adapters, Adapter{Name: "other", Version: version.Must(version.NewSemver("9.0.0")), Path: "/a/other_v9.0.0", Dir: "/a"})
	return r
}

func TestSelect(t *testing.T) {
	res := result("thermo", "1.2.0", "1.1.0", "2.1.0", "1.2.5", "1.3.0", "2.0.0", "3.0.0-beta.1", "1.2.5-rc.1", "1.4.0-rc.2")
	tests := []struct {
		ref  string
		pre  bool
		want string // "" with err
		err  error
	}{
		{ref: "thermo", want: "2.1.0"},
		{ref: "thermo", pre: true, want: "3.0.0-beta.1"},
		{ref: "thermo@~> 1.2", want: "1.3.0"},
		{ref: "thermo@~> 1.2", pre: true, want: "1.4.0-rc.2"},
		{ref: "thermo@~> 1.2.0", want: "1.2.5"},
		{ref: "thermo@>= 2, < 3", want: "2.1.0"},
		{ref: "thermo@>= 2, < 3", pre: true, want: "2.1.0"}, // 3.0.0-beta.1 is a pre-release of 3.0.0, not < 3
		{ref: "thermo@>= 3", err: ErrNoMatchingVersion},
		{ref: "thermo@>= 3", pre: true, want: "3.0.0-beta.1"},
		{ref: "thermo@!= 2.1.0", want: "2.0.0"}, // go-version's != alone would admit 3.0.0-beta.1
		{ref: "thermo@1.2.0", want: "1.2.0"},
		{ref: "thermo@= 1.2.5", want: "1.2.5"},
		{ref: "thermo@= 1.4.0", err: ErrNoMatchingVersion},
		{ref: "thermo@= 1.4.0", pre: true, want: "1.4.0-rc.2"},
		{ref: "thermo@3.0.0-beta.1", want: "3.0.0-beta.1"},                 // the constraint names the pre-release
		{ref: "thermo@>= 1.2.5-alpha, < 1.2.5-zeta", want: "1.2.5-rc.1"},   // same MAJOR.MINOR.PATCH
		{ref: "thermo@>= 1.2.5-alpha, < 1.2.5", err: ErrNoMatchingVersion}, // "< 1.2.5" names none: go-version refuses
		{ref: "thermo@>= 1.0.0-alpha", want: "2.1.0"},                      // names a pre-release, releases still eligible
		{ref: "thermo@>= 2.1.0-alpha", pre: true, want: "3.0.0-beta.1"},    // via the Prerelease option
		{ref: "thermo@< 1", err: ErrNoMatchingVersion},
		{ref: "nothing", err: ErrNotFound},
		{ref: "nothing@>= 1", pre: true, err: ErrNotFound},
	}
	for _, tt := range tests {
		name := tt.ref
		if tt.pre {
			name += " (prerelease)"
		}
		t.Run(name, func(t *testing.T) {
			ref, err := ParseRef(tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			var opts *SelectOptions
			if tt.pre {
				opts = &SelectOptions{Prerelease: true}
			}
			a, err := res.Select(ref, opts)
			if tt.err != nil {
				var nf *NotFoundError
				if !errors.As(err, &nf) || !errors.Is(err, tt.err) {
					t.Fatalf("got %v, %v; want %v", a, err, tt.err)
				}
				other := ErrNotFound
				if tt.err == ErrNotFound {
					other = ErrNoMatchingVersion
				}
				if errors.Is(err, other) {
					t.Fatalf("%v is also %v", err, other)
				}
				if nf.Ref.Raw != tt.ref || len(nf.Candidates) == 0 || !strings.Contains(err.Error(), nf.Candidates[0]) {
					t.Fatalf("error %+v", nf)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Name != "thermo" || a.Version.String() != tt.want {
				t.Fatalf("got %s %s, want %s", a.Name, a.Version, tt.want)
			}
		})
	}
}

func TestSelectCandidates(t *testing.T) {
	res := result("thermo", "1.0.0", "2.0.0-rc.1", "1.5.0")
	_, err := res.Select(Ref{Name: "thermo", Constraints: version.MustConstraints(version.NewConstraint(">= 5"))}, nil)
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatal(err)
	}
	if want := []string{"2.0.0-rc.1", "1.5.0", "1.0.0"}; !slices.Equal(nf.Candidates, want) {
		t.Errorf("versions %v, want %v", nf.Candidates, want)
	}
	_, err = res.Select(Ref{Name: "thermos"}, nil)
	if !errors.As(err, &nf) {
		t.Fatal(err)
	}
	if want := []string{"other", "thermo"}; !slices.Equal(nf.Candidates, want) {
		t.Errorf("names %v, want %v", nf.Candidates, want)
	}
	var empty *Result
	if _, err := empty.Select(Ref{Name: "x"}, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("nil result: %v", err)
	}
}

func TestLookup(t *testing.T) {
	res := result("thermo", "1.0.0", "1.10.0", "1.9.0", "2.0.0-rc.1")
	var got []string
	for _, a := range res.Lookup("thermo") {
		got = append(got, a.Version.String())
	}
	if want := []string{"2.0.0-rc.1", "1.10.0", "1.9.0", "1.0.0"}; !slices.Equal(got, want) {
		t.Errorf("Lookup = %v, want %v", got, want)
	}
	if l := res.Lookup("none"); l != nil {
		t.Errorf("Lookup(none) = %v", l)
	}
	var empty *Result
	if l := empty.Lookup("thermo"); l != nil {
		t.Errorf("nil result Lookup = %v", l)
	}
	// The returned slice is a copy.
	res.Lookup("thermo")[0].Name = "changed"
	if res.Lookup("thermo")[0].Name != "thermo" {
		t.Error("Lookup returned the Result's own storage")
	}
}

func TestParseRef(t *testing.T) {
	tests := []struct {
		in      string
		name    string
		cons    string // Constraints.String(); "" means nil
		wantErr error
	}{
		{in: "thermo", name: "thermo"},
		{in: "modbus-tcp", name: "modbus-tcp"},
		{in: "thermo@~> 1.2", name: "thermo", cons: "~> 1.2"},
		{in: "x@>= 2, < 3", name: "x", cons: ">= 2, < 3"},
		{in: "x@1.4.0", name: "x", cons: "1.4.0"},
		{in: "x@ >= 1.0.0-beta ", name: "x", cons: " >= 1.0.0-beta "},
		{in: "", wantErr: ErrRefName},
		{in: "@", wantErr: ErrRefName},
		{in: "@1.0.0", wantErr: ErrRefName},
		{in: "Thermo", wantErr: ErrRefName},
		{in: " thermo", wantErr: ErrRefName},
		{in: "thermo_v1.0.0", wantErr: ErrRefName},
		{in: "-x", wantErr: ErrRefName},
		{in: strings.Repeat("a", maxNameLen+1), wantErr: ErrRefName},
		{in: "x@", wantErr: ErrRefConstraint},
		{in: "x@  ", wantErr: ErrRefConstraint},
		{in: "x@bogus", wantErr: ErrRefConstraint},
		{in: "x@>= 1,", wantErr: ErrRefConstraint},
		{in: "x@=> 1", wantErr: ErrRefConstraint},
		{in: "a@b@c", wantErr: ErrRefConstraint},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			ref, err := ParseRef(tt.in)
			if tt.wantErr != nil {
				var re *RefError
				if !errors.As(err, &re) || !errors.Is(err, tt.wantErr) || re.Raw != tt.in {
					t.Fatalf("got %+v, %v; want %v", ref, err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr.Error()) {
					t.Errorf("message %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ref.Name != tt.name || ref.Raw != tt.in || ref.String() != tt.in {
				t.Fatalf("got %+v", ref)
			}
			if (ref.Constraints == nil) != (tt.cons == "") || (tt.cons != "" && ref.Constraints.String() != tt.cons) {
				t.Fatalf("constraints %q, want %q", ref.Constraints, tt.cons)
			}
		})
	}
}

func TestRefString(t *testing.T) {
	if s := (Ref{Name: "x"}).String(); s != "x" {
		t.Errorf("got %q", s)
	}
	r := Ref{Name: "x", Constraints: version.MustConstraints(version.NewConstraint(">= 1"))}
	if s := r.String(); s != "x@>= 1" {
		t.Errorf("got %q", s)
	}
}
