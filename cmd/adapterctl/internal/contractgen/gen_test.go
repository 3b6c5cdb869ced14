package contractgen

import (
	"bytes"
	"flag"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/e2e/contractapi"
	"github.com/adapterkit/adapterkit/examples/thermometer/device"
)

var update = flag.Bool("update", false, "write the golden files")

// The generated files of two contracts, in each language, are the golden files in
// testdata (go test -update writes them): the thermometer example's, and one with every
// kind the codec writes. The e2e test (e2e/contract_test.go) compiles them with tsc
// --strict, mypy --strict and cargo, and runs adapters written with them.
func TestGolden(t *testing.T) {
	for _, c := range []struct {
		pkg      string
		services []*contract.Service
	}{
		{"github.com/adapterkit/adapterkit/examples/thermometer/device", []*contract.Service{device.Service}},
		{"github.com/adapterkit/adapterkit/e2e/contractapi", []*contract.Service{contractapi.Service}},
	} {
		doc, err := contract.Schema(c.services...)
		if err != nil {
			t.Fatal(err)
		}
		for _, lang := range Langs {
			pkg := path.Base(c.pkg)
			t.Run(pkg+"/"+lang, func(t *testing.T) {
				got, err := Generate(lang, c.pkg, doc)
				if err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("testdata", FileName(lang, pkg))
				if *update {
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from the generated file (go test -update writes it):\n%s", golden, diff(string(want), string(got)))
				}
			})
		}
	}
}

// diff returns the first lines where want and got differ.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\nwant: " + a + "\ngot:  " + b
		}
	}
	return ""
}
