package discovery

import (
	"github.com/adapterkit/adapterkit/internal/testkit"

	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// The not-found error names the files that were not taken and why: a non-executable
// adapter file and one in a world-writable directory, as adapterctl list shows them.
// The list is accessible as NotFoundError.Rejected / RejectedFor.
func TestNotFoundNamesRejectedFiles(t *testing.T) {
	needModes(t)
	root := testkit.TempDir(t)
	plain := mkdir(t, root, "plain", 0o755)
	noexec := mkfile(t, plain, "inventory_v1.0.0", 0o644)
	mkfile(t, plain, "notes.txt", 0o644)
	open := mkdir(t, root, "open", 0o777|fs.ModeSticky)
	ww := mkfile(t, open, "inventory_v1.1.0", 0o755)
	res, err := Scan(context.Background(), nil, plain, open)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ParseRef("inventory")
	if err != nil {
		t.Fatal(err)
	}
	_, err = res.Select(ref, nil)
	var nf *NotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, ErrNotFound) {
		t.Fatalf("Select = %v, want a *NotFoundError", err)
	}
	mine := nf.RejectedFor()
	if len(mine) != 2 || mine[0].Path != noexec || mine[0].Reason != NotExecutable || mine[1].Path != ww || mine[1].Reason != WorldWritable {
		t.Fatalf("RejectedFor = %+v", mine)
	}
	if len(nf.Rejected) != 3 {
		t.Errorf("Rejected has %d entries, want all 3: %+v", len(nf.Rejected), nf.Rejected)
	}
	msg := err.Error()
	for _, want := range []string{noexec + " (not executable", ww + " (world-writable"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "notes.txt") {
		t.Errorf("error names an unrelated file although related ones exist: %s", msg)
	}

	// Nothing named like the adapter: the other rejected files are named, a few.
	ref, _ = ParseRef("thermo")
	_, err = res.Select(ref, nil)
	if msg := err.Error(); !strings.Contains(msg, "other files not taken: ") || !strings.Contains(msg, filepath.Join(plain, "notes.txt")+" (bad name") {
		t.Errorf("error does not name the other rejected files: %s", msg)
	}
}

// A file name given where a reference is expected gets the reference it stands for.
func TestParseRefSuggestsReference(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"inventory_v1.0.0", "inventory@1.0.0"},
		{"inventory_v1.0.0.exe", "inventory@1.0.0"},
		{"thermo_v2.1.0-rc.1", "thermo@2.1.0-rc.1"},
		{"Inventory", ""},
		{"inventory_vX", ""},
	} {
		_, err := ParseRef(c.in)
		var re *RefError
		if !errors.As(err, &re) || re.Suggestion != c.want {
			t.Errorf("ParseRef(%q) = %v, want suggestion %q", c.in, err, c.want)
			continue
		}
		if c.want != "" && !strings.Contains(err.Error(), `did you mean "`+c.want+`"?`) {
			t.Errorf("ParseRef(%q) message lacks the suggestion: %v", c.in, err)
		}
	}
}
