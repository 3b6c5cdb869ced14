package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/examples/thermometer/device"
)

// contract schema finds the services of the packages (exported variables declared with
// contract.NewService or the type *contract.Service, each service once), builds the
// program that prints contract.Schema of them, and writes its document to -o FILE.
func TestContractSchema(t *testing.T) {
	out := filepath.Join(t.TempDir(), "schema.json")
	var stdout, stderr bytes.Buffer
	status := run([]string{"contract", "schema", "-o", out, "../../examples/thermometer/device", "./testdata/contractschema"},
		strings.NewReader(""), &stdout, &stderr)
	if status != ExitOK {
		t.Fatalf("status %d, stderr:\n%s", status, stderr.String())
	}
	if want := "github.com/adapterkit/adapterkit/cmd/adapterctl/testdata/contractschema.hidden is not exported: left out\n"; !strings.HasSuffix(stderr.String(), want) {
		t.Errorf("stderr %q, want the unexported service named", stderr.String())
	}
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services []json.RawMessage `json:"services"`
	}
	if err := json.Unmarshal(text, &doc); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range doc.Services {
		var svc struct{ ID string }
		if err := json.Unmarshal(s, &svc); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, svc.ID)
	}
	if want := []string{"example.device", "example.a", "example.b"}; !slices.Equal(ids, want) {
		t.Errorf("services %q, want %q", ids, want)
	}
	direct, err := contract.Schema(device.Service)
	if err != nil {
		t.Fatal(err)
	}
	var own struct {
		Services []json.RawMessage `json:"services"`
	}
	if err := json.Unmarshal(direct, &own); err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if json.Compact(&a, own.Services[0]) != nil || json.Compact(&b, doc.Services[0]) != nil || a.String() != b.String() {
		t.Errorf("example.device:\n%s\nwant contract.Schema's:\n%s", b.String(), a.String())
	}
}

// What contract schema cannot describe is refused with one line saying why.
func TestContractSchemaRefuses(t *testing.T) {
	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{nil, ExitUsage, "at least one PACKAGE is needed"},
		{[]string{"."}, ExitFailed, "is a command (package main), which cannot be imported"},
		{[]string{"../../codec"}, ExitFailed, "github.com/adapterkit/adapterkit/codec declares no exported package-level *contract.Service variable"},
		{[]string{"./nosuchpackage"}, ExitFailed, "nosuchpackage"},
	} {
		var stdout, stderr bytes.Buffer
		status := run(append([]string{"contract", "schema"}, c.args...), strings.NewReader(""), &stdout, &stderr)
		if status != c.status || !strings.Contains(stderr.String(), c.want) || stdout.Len() != 0 {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want %d and %q", c.args, status, stdout.String(), stderr.String(), c.status, c.want)
		}
	}
}

// contract gen writes one file per package in the language asked, named after the
// package: the file contractgen's golden test keeps (the schema of the package, as
// contract schema makes it, read by package contractgen).
func TestContractGen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gen")
	for _, lang := range []string{"typescript", "python", "rust"} {
		runCmd(t, "", "contract", "gen", "-lang", lang, "-o", dir, "../../examples/thermometer/device", "../../e2e/contractapi").want(t, ExitOK, nil, nil)
	}
	for _, name := range []string{"device.ts", "device.py", "device.rs", "contractapi.ts", "contractapi.py", "contractapi.rs"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("internal", "contractgen", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from internal/contractgen/testdata/%s", name, name)
		}
	}
	runCmd(t, "", "contract", "gen", "-lang", "go", "-o", dir, "./testdata/contractschema").want(t, ExitUsage, nil, []string{"-lang must be one of typescript, python, rust"})
	runCmd(t, "", "contract", "gen", "-lang", "rust", "./testdata/contractschema").want(t, ExitUsage, nil, []string{"-o DIR is needed"})
}
