package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/adapterkit/adapterkit/cmd/adapterctl/internal/contractgen"
)

const contractGenHelp = `
Writes, for each Go PACKAGE that declares services, one file in DIR in the language
LANG (typescript, python or rust), named after the package (kvapi.ts, kvapi.py,
kvapi.rs): the types of every method's params and result, and the method descriptors
the SDK (sdk/) registers handlers with, so that a handler's params and result are
typed and the SDK checks them at run time with the contract's rules. The file is made
from the package's JSON Schema, as 'adapterctl contract schema' writes it.

  TypeScript  implement(service, ReadMethod, handler) from @adapterkit/sdk
  Python      adapterkit.contract.implement(service, ReadMethod, handler)
  Rust        service.implement(READ_METHOD, handler)

PACKAGE is a Go package pattern, as for 'contract schema'. Needs the go command on
PATH. See docs/contracts.md.
`

func runContractGen(ctx context.Context, e *env, args []string) int {
	var lang, dir string
	f := newFlags(e, "contract gen", "-lang LANG -o DIR PACKAGE...", contractGenHelp)
	f.StringVar(&lang, "lang", "", "the language: "+strings.Join(contractgen.Langs, ", "))
	f.StringVar(&dir, "o", "", "write the files into `DIR` (created if missing)")
	pos, done, status := f.parse(args)
	switch {
	case done:
		return status
	case !slices.Contains(contractgen.Langs, lang):
		return fail(e, "contract gen", false, usagef("-lang must be one of %s", strings.Join(contractgen.Langs, ", ")), nil)
	case dir == "":
		return fail(e, "contract gen", false, usagef("-o DIR is needed"), nil)
	case len(pos) == 0:
		return fail(e, "contract gen", false, usagef("at least one PACKAGE is needed"), nil)
	}
	if err := contractGen(ctx, e, lang, dir, pos); err != nil {
		fmt.Fprintf(e.stderr, "adapterctl contract gen: %v\n", err)
		return ExitFailed
	}
	return ExitOK
}

// contractGen writes the file of each package matching patterns in lang into dir.
func contractGen(ctx context.Context, e *env, lang, dir string, patterns []string) error {
	modDir, err := moduleDir(ctx)
	if err != nil {
		return err
	}
	pkgs, err := contractPackages(ctx, patterns, e, "contract gen")
	if err != nil {
		return err
	}
	written := map[string]string{}
	for _, p := range pkgs {
		name := contractgen.FileName(lang, p.Name)
		if other, ok := written[name]; ok {
			return fmt.Errorf("packages %s and %s would both be written to %s: generate them into different directories", other, p.ImportPath, name)
		}
		written[name] = p.ImportPath
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, p := range pkgs {
		doc, err := schemaOf(ctx, modDir, []contractPackage{p})
		if err != nil {
			return err
		}
		src, err := contractgen.Generate(lang, p.ImportPath, doc)
		if err != nil {
			return fmt.Errorf("package %s: %w", p.ImportPath, err)
		}
		if err := os.WriteFile(filepath.Join(dir, contractgen.FileName(lang, p.Name)), src, 0o644); err != nil {
			return err
		}
	}
	return nil
}
