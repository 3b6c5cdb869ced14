package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

const contractHelp = `
Tools for contracts: the Go packages that declare services with package contract
(contract.NewService, contract.NewMethod).

Subcommands:
  schema [-o FILE] PACKAGE...         the JSON Schema of every method's params and result
  gen -lang LANG -o DIR PACKAGE...    the types and method descriptors in TypeScript,
                                      Python or Rust, for the language SDKs

Run 'adapterctl contract schema --help' (or gen --help) for its flags.
`

const contractSchemaHelp = `
Writes the JSON Schema (draft 2020-12) of the params and result of every method of the
services the Go PACKAGEs declare, as contract.Schema returns it, on stdout or in FILE:
{"services":[{"id":...,"version":...,"methods":[{"name":...,"params":{...},"result":{...}}]}]}.

PACKAGE is a Go package pattern, as for 'go list' ("./device", "example.com/m/..."),
taken from the working directory, which must be inside a Go module that can build
them. The services are the exported package-level variables of type *contract.Service,
declared with that type or as contract.NewService(...). They are read from a program
that imports the packages and calls contract.Schema: it is built with 'go run' through
an overlay, so nothing is written into the module. Needs the go command on PATH.
See docs/contracts.md.
`

// contractExitHelp documents the exit statuses of contract schema and gen, which end
// their help.
const contractExitHelp = `Exit status:
  0  the document (or the files) was written
  1  it could not be made: a package could not be listed or built, declares no
     service, or declares an invalid one (or one gen cannot write in the language);
     or FILE could not be written
  2  usage error (bad flags or arguments)
`

// contractPath is the import path of package contract.
const contractPath = "github.com/adapterkit/adapterkit/contract"

func runContract(ctx context.Context, e *env, args []string) int {
	const usage = "Usage: adapterctl contract SUBCOMMAND [flags] [arguments]\n%s\n%s"
	if len(args) == 0 {
		fmt.Fprintf(e.stderr, usage, contractHelp, contractExitHelp)
		return ExitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(e.stdout, usage, contractHelp, contractExitHelp)
		return ExitOK
	case "schema":
		return runContractSchema(ctx, e, args[1:])
	case "gen":
		return runContractGen(ctx, e, args[1:])
	}
	return fail(e, "contract", false, usagef("unknown subcommand %q", args[0]), nil)
}

func runContractSchema(ctx context.Context, e *env, args []string) int {
	var out string
	f := newFlags(e, "contract schema", "[-o FILE] PACKAGE...", contractSchemaHelp)
	f.StringVar(&out, "o", "", "write the document to `FILE` instead of stdout")
	pos, done, status := f.parse(args)
	switch {
	case done:
		return status
	case len(pos) == 0:
		return fail(e, "contract schema", false, usagef("at least one PACKAGE is needed"), nil)
	}
	doc, err := contractSchema(ctx, pos, e)
	if err == nil && out != "" {
		err = os.WriteFile(out, doc, 0o644)
	} else if err == nil {
		_, err = e.stdout.Write(doc)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "adapterctl contract schema: %v\n", err)
		return ExitFailed
	}
	return ExitOK
}

// listedPackage is what 'go list -json' says of a package.
type listedPackage struct {
	Dir, ImportPath, Name string
	GoFiles               []string
	Error                 *struct{ Err string }
}

// contractPackage is a package that declares services: its import path, name and the
// names of its service variables.
type contractPackage struct {
	ImportPath, Name string
	Vars             []string
}

// contractPackages lists the packages matching patterns and their service variables;
// a package that declares none is an error. what names the command in warnings.
func contractPackages(ctx context.Context, patterns []string, e *env, what string) ([]contractPackage, error) {
	listed, err := goOutput(ctx, "", append([]string{"list", "-e", "-json=Dir,ImportPath,Name,GoFiles,Error", "--"}, patterns...)...)
	if err != nil {
		return nil, err
	}
	var pkgs []contractPackage
	for dec := json.NewDecoder(bytes.NewReader(listed)); dec.More(); {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("reading go list's output: %w", err)
		}
		switch {
		case p.Error != nil:
			return nil, fmt.Errorf("package %s: %s", p.ImportPath, p.Error.Err)
		case p.Name == "main":
			return nil, fmt.Errorf("package %s is a command (package main), which cannot be imported: declare the contract in a package of its own", p.ImportPath)
		}
		names, hidden, err := serviceVars(p)
		if err != nil {
			return nil, err
		}
		for _, h := range hidden {
			fmt.Fprintf(e.stderr, "adapterctl %s: %s.%s is not exported: left out\n", what, p.ImportPath, h)
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("package %s declares no exported package-level *contract.Service variable", p.ImportPath)
		}
		pkgs = append(pkgs, contractPackage{ImportPath: p.ImportPath, Name: p.Name, Vars: names})
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("no package matches %s", strings.Join(patterns, " "))
	}
	return pkgs, nil
}

// contractSchema builds and runs a program that prints contract.Schema of the services
// the packages matching patterns declare, and returns what it printed.
func contractSchema(ctx context.Context, patterns []string, e *env) ([]byte, error) {
	modDir, err := moduleDir(ctx)
	if err != nil {
		return nil, err
	}
	pkgs, err := contractPackages(ctx, patterns, e, "contract schema")
	if err != nil {
		return nil, err
	}
	return schemaOf(ctx, modDir, pkgs)
}

// moduleDir returns the directory of the main module of the working directory.
func moduleDir(ctx context.Context) (string, error) {
	gomod, err := goOutput(ctx, "", "env", "GOMOD")
	if err != nil {
		return "", err
	}
	modFile := strings.TrimSpace(string(gomod))
	if modFile == "" || modFile == os.DevNull {
		return "", errors.New("the working directory is not inside a Go module (go env GOMOD is empty)")
	}
	return filepath.Dir(modFile), nil
}

// schemaOf builds and runs, in the module at modDir, the program that prints
// contract.Schema of the services of pkgs, and returns what it printed.
func schemaOf(ctx context.Context, modDir string, pkgs []contractPackage) ([]byte, error) {
	var imports []string
	var refs [][]string // refs[i]: the service variables of imports[i]
	for _, p := range pkgs {
		imports, refs = append(imports, p.ImportPath), append(refs, p.Vars)
	}
	tmp, err := os.MkdirTemp("", "adapterctl-contract-schema-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// The program is a package of the module (so that it may import the module's internal
	// packages) that exists only in the overlay.
	dir := filepath.Join(modDir, ".adapterctl-contract-schema")
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{
		filepath.Join(dir, "main.go"): filepath.Join(tmp, "main.go"),
	}})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "main.go"), schemaProgram(imports, refs), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "overlay.json"), overlay, 0o600); err != nil {
		return nil, err
	}
	return goOutput(ctx, modDir, "run", "-overlay", filepath.Join(tmp, "overlay.json"), "."+string(filepath.Separator)+filepath.Base(dir))
}

// goOutput runs the go command in dir (the working directory when "") and returns its
// standard output; its standard error ends the error when it fails.
func goOutput(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// schemaProgram returns the source of the program that prints contract.Schema of the
// variables refs[i] of the packages imports[i], each service once, in that order.
func schemaProgram(imports []string, refs [][]string) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by adapterctl contract schema; DO NOT EDIT.\n\npackage main\n\nimport (\n")
	b.WriteString("\t\"fmt\"\n\t\"os\"\n\t\"slices\"\n\n\tcontract " + strconv.Quote(contractPath) + "\n")
	for i, p := range imports {
		fmt.Fprintf(&b, "\tp%d %s\n", i, strconv.Quote(p))
	}
	b.WriteString(")\n\nfunc main() {\n\tvar services []*contract.Service\n\tfor _, s := range []*contract.Service{\n")
	for i, names := range refs {
		for _, n := range names {
			fmt.Fprintf(&b, "\t\tp%d.%s,\n", i, n)
		}
	}
	b.WriteString("\t} {\n\t\tif s != nil && !slices.Contains(services, s) {\n\t\t\tservices = append(services, s)\n\t\t}\n\t}\n")
	b.WriteString("\tdoc, err := contract.Schema(services...)\n\tif err != nil {\n\t\tfmt.Fprintln(os.Stderr, err)\n\t\tos.Exit(1)\n\t}\n")
	b.WriteString("\tif _, err := os.Stdout.Write(doc); err != nil {\n\t\tos.Exit(1)\n\t}\n}\n")
	return b.Bytes()
}

// serviceVars returns the package-level variables of p that hold a *contract.Service:
// declared with that type, or initialised with contract.NewService(...). Exported ones
// in names, in file and declaration order; unexported ones (which the program cannot
// name) in hidden.
func serviceVars(p listedPackage) (names, hidden []string, err error) {
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		local := ""
		for _, im := range f.Imports {
			if path, _ := strconv.Unquote(im.Path.Value); path == contractPath {
				local = "contract"
				if im.Name != nil {
					local = im.Name.Name
				}
			}
		}
		if local == "" || local == "_" {
			continue
		}
		// isContract reports whether x names contract's sel: contract.sel, or sel alone
		// under a dot import.
		isContract := func(x ast.Expr, sel string) bool {
			switch x := x.(type) {
			case *ast.SelectorExpr:
				id, ok := x.X.(*ast.Ident)
				return ok && id.Name == local && x.Sel.Name == sel
			case *ast.Ident:
				return local == "." && x.Name == sel
			}
			return false
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				typed := false
				if star, ok := v.Type.(*ast.StarExpr); ok {
					typed = isContract(star.X, "Service")
				}
				for i, id := range v.Names {
					service := typed
					if !typed && v.Type == nil && len(v.Values) == len(v.Names) {
						call, ok := v.Values[i].(*ast.CallExpr)
						service = ok && isContract(call.Fun, "NewService")
					}
					switch {
					case !service || id.Name == "_":
					case id.IsExported():
						names = append(names, id.Name)
					default:
						hidden = append(hidden, id.Name)
					}
				}
			}
		}
	}
	return names, hidden, nil
}
