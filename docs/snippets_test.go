package docs_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The Go snippets of README.md and docs/*.md are what a reader copies first; an API
// renamed under them leaves them quietly wrong. TestGoSnippetsCompile keeps every one
// compiling against the module as it is:
//
//   - a snippet of declarations that quotes a package of the repository (its lines, less
//     comments and alignment, appear in order in one of the repository's .go files) is
//     checked by being found there: that package compiles with the rest;
//   - any other snippet of declarations is compiled as a file of its own;
//   - a snippet of statements is compiled as the body of a function, after the
//     variables it declares (a host snippet shows their use in prose, not in code);
//   - a whole file of package main (a program the README has a reader write) is
//     compiled as it is.
//
// Packages are imported by their names (below); ctx, h and reg are given, as the
// prose around the snippets introduces them: a context, a *registry.Handle and a
// *registry.Registry. Every snippet is then built and vetted with the module's go.

// snippetImports are the packages a snippet may use, by the name it uses.
var snippetImports = map[string]string{
	"context": "context", "errors": "errors", "fmt": "fmt", "io": "io", "os": "os", "time": "time",
	"strings": "strings", "json": "encoding/json", "tls": "crypto/tls", "filepath": "path/filepath",
	"hclog":         "github.com/hashicorp/go-hclog",
	"registry":      "github.com/adapterkit/adapterkit/registry",
	"contract":      "github.com/adapterkit/adapterkit/contract",
	"plugin":        "github.com/adapterkit/adapterkit/plugin",
	"runtime":       "github.com/adapterkit/adapterkit/runtime",
	"wire":          "github.com/adapterkit/adapterkit/wire",
	"lifecycle":     "github.com/adapterkit/adapterkit/lifecycle",
	"controlplane":  "github.com/adapterkit/adapterkit/controlplane",
	"platform":      "github.com/adapterkit/adapterkit/platform",
	"discovery":     "github.com/adapterkit/adapterkit/discovery",
	"limits":        "github.com/adapterkit/adapterkit/limits",
	"codec":         "github.com/adapterkit/adapterkit/codec",
	"device":        "github.com/adapterkit/adapterkit/examples/thermometer/device",
	"kvapi":         "github.com/adapterkit/adapterkit/examples/kv/kvapi",
	"http":          "net/http",
	"prometheus":    "github.com/prometheus/client_golang/prometheus",
	"promhttp":      "github.com/prometheus/client_golang/prometheus/promhttp",
	"promcollector": "github.com/adapterkit/adapterkit/registry/promcollector",
}

// snippetGivens are the variables a snippet may use without declaring them.
const snippetGivens = `
var (
	ctx = context.Background()
	h   *registry.Handle
	reg *registry.Registry
)
`

// goBlock matches a fenced Go block.
var goBlock = regexp.MustCompile("(?ms)^```go\n(.*?)^```")

type snippet struct {
	where string // file:line
	text  string
}

func goSnippets(t *testing.T) []snippet {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join("..", "README.md")}, files...)
	var out []snippet
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range goBlock.FindAllSubmatchIndex(b, -1) {
			line := 1 + bytes.Count(b[:m[0]], []byte("\n"))
			out = append(out, snippet{where: fmt.Sprintf("%s:%d", f, line), text: string(b[m[2]:m[3]])})
		}
	}
	return out
}

// codeLines returns src's lines without comments, blank lines and alignment.
func codeLines(src string) []string {
	var out []string
	for _, l := range strings.Split(src, "\n") {
		if i := strings.Index(l, "//"); i >= 0 {
			l = l[:i]
		}
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// repoGoLines returns the code lines of every .go file of the repository.
func repoGoLines(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (skippedDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) && p != ".." {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] = codeLines(string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// quotes reports the repository file whose code contains the snippet's code lines
// as one run, or "".
func quotes(files map[string][]string, text string) string {
	want := codeLines(text)
	if len(want) == 0 {
		return ""
	}
	var names []string
	for p := range files {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		have := files[p]
		for i := 0; i+len(want) <= len(have); i++ {
			if slices.Equal(have[i:i+len(want)], want) {
				return p
			}
		}
	}
	return ""
}

// snippetSource turns a snippet into a compilable file of package main.
func snippetSource(s snippet) (string, error) {
	if strings.HasPrefix(s.text, "package main\n") {
		return fmt.Sprintf("// Code generated from %s by TestGoSnippetsCompile. DO NOT EDIT.\n\n%s", s.where, s.text), nil // a whole file
	}
	fset := token.NewFileSet()
	var body string
	if _, err := parser.ParseFile(fset, "", "package main\n"+s.text, 0); err == nil {
		body = s.text // declarations
		if !strings.Contains(s.text, "func main()") {
			body += "\nfunc main() {}\n"
		}
	} else {
		wrapped := "package main\nfunc main() {\n" + s.text + "\n}\n"
		f, err := parser.ParseFile(fset, "", wrapped, 0)
		if err != nil {
			return "", fmt.Errorf("neither declarations nor statements: %v", err)
		}
		// Mark every variable the snippet declares at its top level as used.
		var names []string
		for _, st := range f.Decls[0].(*ast.FuncDecl).Body.List {
			switch st := st.(type) {
			case *ast.AssignStmt:
				if st.Tok == token.DEFINE {
					for _, l := range st.Lhs {
						if id, ok := l.(*ast.Ident); ok && id.Name != "_" && !slices.Contains(names, id.Name) {
							names = append(names, id.Name)
						}
					}
				}
			case *ast.DeclStmt:
				if gd, ok := st.Decl.(*ast.GenDecl); ok && gd.Tok == token.VAR {
					for _, sp := range gd.Specs {
						for _, id := range sp.(*ast.ValueSpec).Names {
							names = append(names, id.Name)
						}
					}
				}
			}
		}
		body = "func main() {\n" + s.text + "\n"
		for _, n := range names {
			body += "\t_ = " + n + "\n"
		}
		body += "}\n"
	}
	// Imports: the names used as a selector's package that the snippet does not
	// declare itself, plus what the givens need.
	f, err := parser.ParseFile(fset, "", "package main\n"+body, 0)
	if err != nil {
		return "", err
	}
	used := map[string]bool{"context": true, "registry": true}
	ast.Inspect(f, func(n ast.Node) bool {
		if se, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := se.X.(*ast.Ident); ok && id.Obj == nil {
				if _, known := snippetImports[id.Name]; known {
					used[id.Name] = true
				}
			}
		}
		return true
	})
	var src strings.Builder
	fmt.Fprintf(&src, "// Code generated from %s by TestGoSnippetsCompile. DO NOT EDIT.\n\npackage main\n\nimport (\n", s.where)
	var names []string
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&src, "\t%s %q\n", n, snippetImports[n])
	}
	src.WriteString(")\n" + snippetGivens + "\n" + body)
	return src.String(), nil
}

func TestGoSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every Go snippet of the documents")
	}
	snippets := goSnippets(t)
	if len(snippets) < 5 {
		t.Fatalf("found %d Go snippets in README.md and docs/*.md, want the README's and the docs' at least", len(snippets))
	}
	files := repoGoLines(t)
	// A directory inside the module (so that its packages resolve as they are), named
	// so that ./... patterns leave it out.
	dir, err := os.MkdirTemp("..", ".snippets-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var pkgs []string
	var of []snippet // of[i] is the snippet of pkgs[i]
	for i, s := range snippets {
		src, err := snippetSource(s)
		if err != nil {
			t.Errorf("%s: %v\n%s", s.where, err, s.text)
			continue
		}
		pkg := filepath.Join(dir, fmt.Sprintf("s%d", i))
		if err := os.Mkdir(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		of = append(of, s)
		pkgs = append(pkgs, "./"+filepath.Base(dir)+"/"+filepath.Base(pkg)) // from the module root
	}
	for _, step := range [][]string{{"build", "-o", os.DevNull}, {"vet"}} {
		for i, p := range pkgs {
			cmd := exec.Command("go", append(step, p)...)
			cmd.Dir = ".."
			if out, err := cmd.CombinedOutput(); err != nil {
				s := of[i]
				if q := quotes(files, s.text); q != "" {
					continue // a quote of q, which compiles with its package
				}
				t.Errorf("%s: the snippet does not pass go %s: %v\n%s\nsnippet:\n%s", s.where, step[0], err, out, s.text)
			}
		}
	}
}
