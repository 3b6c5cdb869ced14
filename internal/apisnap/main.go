// Command apisnap writes or checks the exported-API snapshot of the module's library
// packages: one text file per package under a directory (api/ by default), listing
// every exported declaration — constants with their values, variables, functions,
// types with their exported fields and methods, methods of exported types — without
// doc comments, so that editing documentation does not touch it but any change to
// what a caller can use shows up in review as a diff of that file.
//
//	go run ./internal/apisnap -w      # write api/*.txt (make api)
//	go run ./internal/apisnap         # compare; exit 1 and print the difference (make api-check)
//
// It uses only the standard library (go/parser, go/printer), so it runs offline, and
// it reads the source as built for linux/amd64.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// skip names the directories whose packages are not library API: commands, examples,
// end-to-end tests, test support, other modules and SDKs in other languages.
var skip = map[string]bool{"cmd": true, "examples": true, "e2e": true, "internal": true, "sdk": true, "testdata": true, "build": true, "api": true, "docs": true}

func main() {
	write := flag.Bool("w", false, "write the snapshot instead of checking it")
	dir := flag.String("dir", "api", "snapshot directory")
	flag.Parse()
	if err := run(*write, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "apisnap:", err)
		os.Exit(1)
	}
}

func run(write bool, dir string) error {
	modPath, err := modulePath()
	if err != nil {
		return err
	}
	snaps := map[string]string{} // file name -> contents
	err = filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != "." && (skip[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if p != "." {
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
		}
		text, ok, err := snapshot(p, modPath)
		if err != nil || !ok {
			return err
		}
		snaps[strings.ReplaceAll(filepath.ToSlash(p), "/", "_")+".txt"] = text
		return nil
	})
	if err != nil {
		return err
	}
	if write {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		old, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
		for name, text := range snaps {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	var diffs []string
	have, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	for _, f := range have {
		if _, ok := snaps[filepath.Base(f)]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: package gone (or no longer exports anything)", f))
		}
	}
	names := make([]string, 0, len(snaps))
	for n := range snaps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		old, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			diffs = append(diffs, fmt.Sprintf("%s: new package, not in the snapshot", filepath.Join(dir, name)))
			continue
		} else if err != nil {
			return err
		}
		if d := lineDiff(string(old), snaps[name]); d != "" {
			diffs = append(diffs, filepath.Join(dir, name)+":\n"+d)
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("the exported API differs from the snapshot (if deliberate, run `make api` and commit %s/):\n%s", dir, strings.Join(diffs, "\n"))
	}
	return nil
}

func modulePath() (string, error) {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		return "", fmt.Errorf("run from the module root: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", errors.New("go.mod names no module")
}

// lineDiff lists the lines only in old (-) and only in new (+), in order.
func lineDiff(old, cur string) string {
	if old == cur {
		return ""
	}
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	o, c := count(old), count(cur)
	var b strings.Builder
	for _, l := range strings.Split(old, "\n") {
		if c[l] < o[l] {
			fmt.Fprintf(&b, "  - %s\n", l)
			o[l]--
		}
	}
	o = count(old)
	for _, l := range strings.Split(cur, "\n") {
		if o[l] < c[l] {
			fmt.Fprintf(&b, "  + %s\n", l)
			c[l]--
		}
	}
	if b.Len() == 0 {
		return "  (declarations reordered)\n"
	}
	return b.String()
}

// snapshot returns the exported API of the package in dir, or ok false when dir holds
// no library package.
func snapshot(dir, modPath string) (string, bool, error) {
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = "linux", "amd64", false
	bp, err := ctx.ImportDir(dir, 0)
	var noGo *build.NoGoError
	if errors.As(err, &noGo) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if bp.Name == "main" {
		return "", false, nil
	}
	fset := token.NewFileSet()
	var blocks []string
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return "", false, err
		}
		for _, d := range f.Decls {
			for _, blk := range exported(d) {
				var buf bytes.Buffer
				if err := (&printer.Config{Mode: printer.UseSpaces, Tabwidth: 4}).Fprint(&buf, fset, blk); err != nil {
					return "", false, err
				}
				// Positions of dropped comments leave blank lines: drop them.
				text := strings.ReplaceAll(buf.String(), "\n\n", "\n")
				for strings.Contains(text, "\n\n") {
					text = strings.ReplaceAll(text, "\n\n", "\n")
				}
				blocks = append(blocks, text)
			}
		}
	}
	if len(blocks) == 0 {
		return "", false, nil
	}
	slices.Sort(blocks)
	path := modPath
	if dir != "." {
		path += "/" + filepath.ToSlash(dir)
	}
	return "package " + bp.Name + " // " + path + "\n\n" + strings.Join(blocks, "\n") + "\n", true, nil
}

// exported returns the exported parts of d, each a declaration to print, without
// comments, bodies or unexported fields and methods.
func exported(d ast.Decl) []ast.Node {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() || (d.Recv != nil && !ast.IsExported(recvName(d.Recv))) {
			return nil
		}
		var recv *ast.FieldList
		if d.Recv != nil { // the receiver's type, not its name
			recv = &ast.FieldList{List: []*ast.Field{{Type: d.Recv.List[0].Type}}}
		}
		return []ast.Node{&ast.FuncDecl{Recv: recv, Name: d.Name, Type: d.Type}}
	case *ast.GenDecl:
		var out []ast.Node
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					t := *s
					t.Doc, t.Comment = nil, nil
					t.Type = prune(s.Type)
					out = append(out, &ast.GenDecl{Tok: token.TYPE, Specs: []ast.Spec{&t}})
				}
			case *ast.ValueSpec:
				for i, n := range s.Names {
					if !n.IsExported() {
						continue
					}
					v := &ast.ValueSpec{Names: []*ast.Ident{n}, Type: s.Type}
					if i < len(s.Values) && (d.Tok == token.CONST || isRef(s.Values[i])) {
						v.Values = []ast.Expr{s.Values[i]}
					}
					out = append(out, &ast.GenDecl{Tok: d.Tok, Specs: []ast.Spec{v}})
				}
			}
		}
		return out
	}
	return nil
}

// isRef reports an identifier or selector: a re-export (var ErrX = lower.ErrX), whose
// identity is part of the API.
func isRef(e ast.Expr) bool {
	switch e.(type) {
	case *ast.Ident, *ast.SelectorExpr:
		return true
	}
	return false
}

func recvName(l *ast.FieldList) string {
	if l == nil || len(l.List) == 0 {
		return ""
	}
	t := l.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// prune drops unexported fields of a struct and unexported methods of an interface.
func prune(t ast.Expr) ast.Expr {
	switch t := t.(type) {
	case *ast.StructType:
		return &ast.StructType{Fields: keep(t.Fields)}
	case *ast.InterfaceType:
		return &ast.InterfaceType{Methods: keep(t.Methods)}
	}
	return t
}

func keep(l *ast.FieldList) *ast.FieldList {
	out := &ast.FieldList{}
	for _, f := range l.List {
		var names []*ast.Ident
		for _, n := range f.Names {
			if n.IsExported() {
				names = append(names, n)
			}
		}
		embeddedExported := len(f.Names) == 0 && ast.IsExported(typeName(f.Type))
		if len(names) > 0 || embeddedExported {
			out.List = append(out.List, &ast.Field{Names: names, Type: prune(f.Type), Tag: f.Tag})
		}
	}
	return out
}

func typeName(t ast.Expr) string {
	switch x := t.(type) {
	case *ast.StarExpr:
		return typeName(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.Ident:
		return x.Name
	}
	return ""
}
