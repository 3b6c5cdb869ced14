package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/contract"
)

// The params of example.echo.record, which the echo example decodes and returns.
type echoParams struct {
	Probe string `json:"probe"`
	Seq   int64  `json:"seq"`
	Unit  string `json:"unit"`
	Pad   string `json:"pad"`
}

// contractFile writes the schema of one method of service example.echo to a file.
func contractFile[P, R any](t *testing.T, version int, method string) string {
	t.Helper()
	svc := contract.NewService("example.echo", version)
	contract.NewMethod[P, R](svc, method)
	doc, err := contract.Schema(svc)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "contract.json")
	if err := os.WriteFile(p, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// check --contract calls the method with the generated cases and validates each result
// against the result schema: the echo example returns its params, so a result schema
// that differs from the params' is a named failure: a wrong type, an extra member, a
// missing member; so do params the adapter's decoding refuses (its types are not the
// contract's), a method the catalog lacks and another service version.
func TestCheckContract(t *testing.T) {
	for _, c := range []struct {
		name, file, status, detail string
	}{
		{"same", contractFile[echoParams, echoParams](t, 1, "record"), statusPass, "cases answered, each result valid against the result schema"},
		{"extra member", contractFile[echoParams, struct {
			Probe string `json:"probe"`
			Seq   int64  `json:"seq"`
			Unit  string `json:"unit"`
		}](t, 1, "record"), statusFail, "empty: extra member at /: pad (the contract has no such member)"},
		{"wrong type", contractFile[echoParams, struct {
			Probe string `json:"probe"`
			Seq   string `json:"seq"`
			Unit  string `json:"unit"`
			Pad   string `json:"pad"`
		}](t, 1, "record"), statusFail, "empty: wrong type at /seq: number, the contract wants string"},
		{"missing member", contractFile[echoParams, struct {
			echoParams
			M bool `json:"m"`
		}](t, 1, "record"), statusFail, "empty: missing member at /: m"},
		{"out of range", contractFile[echoParams, struct {
			Probe string `json:"probe"`
			Seq   uint8  `json:"seq"`
			Unit  string `json:"unit"`
			Pad   string `json:"pad"`
		}](t, 1, "record"), statusFail, "maxima: out of the contract at /seq: "},
		{"params refused", contractFile[struct {
			Probe string `json:"probe"`
			Seq   uint64 `json:"seq"`
		}, echoParams](t, 1, "record"), statusFail, "maxima: params the contract accepts refused by the adapter's decoding: "},
		{"not in the catalog", contractFile[echoParams, echoParams](t, 1, "nope"), statusFail, "service example.echo of the catalog has no method example.echo.nope"},
		{"other version", contractFile[echoParams, echoParams](t, 2, "record"), statusFail, "the catalog has service example.echo version 1, the contract version 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runCmd(t, "", "check", "--json", "--timeout", "10s", "--contract", c.file, good("echo_v1.2.0"))
			var got *checkResult
			var out checkOutput
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatalf("check --json: %v\nstdout:\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
			}
			for i, ch := range out.Checks {
				if strings.HasPrefix(ch.Name, "contract ") {
					got = &out.Checks[i]
				}
			}
			if got == nil {
				t.Fatalf("no contract check in the report:\n%s", r.stdout)
			}
			if got.Status != c.status || !strings.Contains(got.Detail, c.detail) {
				t.Errorf("%s: %s %q, want %s containing %q", got.Name, got.Status, got.Detail, c.status, c.detail)
			}
			if wantCode := map[string]int{statusPass: ExitOK, statusFail: ExitFailed}[c.status]; r.code != wantCode && r.code != ExitUnverified {
				t.Errorf("exit status %d, want %d", r.code, wantCode)
			}
		})
	}
}

// A file that is not a contract schema is a usage error, before the adapter starts.
func TestCheckContractBadFile(t *testing.T) {
	p := writeFile(t, t.TempDir(), "contract.json", `{"services":[{"id":"x.y","version":1,"methods":[{"name":"x.y.z","params":{"type":"integer"},"result":{}}]}]}`, 0o644)
	runCmd(t, "", "check", "--contract", p, good("echo_v1.2.0")).want(t, ExitUsage, nil, []string{"--contract: ", "integer from <nil> to <nil>"})
}
