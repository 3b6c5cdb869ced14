package layers

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the module's import path; paths below are relative to it.
const module = "github.com/adapterkit/adapterkit"

// layer is one layer of the module: a name (a part of the architecture) and the
// directories whose packages belong to it.
type layer struct {
	name string
	dirs []string
}

// order is the module's layers, lowest first: a package may import packages of its own
// layer and of lower ones only. A package belongs to the layer of the longest directory
// that holds it (internal/x/y is in internal's layer unless internal/x/y or internal/x
// is listed), so a package under cmd/adapterctl/internal is the CLI's.
var order = []layer{
	{"Limits", []string{"limits"}}, // every protocol number, named once
	{"Wire", []string{"wire"}},     // frames, envelopes, codes, catalogs
	// What several layers share (frame codec, buffers, sentinels, pins, bounds, the
	// control plane's grammar and constants, metrics): they import only Limits, Wire and
	// each other. internal/jsoncodec (named although internal covers it) is the JSON
	// value codec that package codec exposes and plugin and registry also call: it is
	// below Codec, whose package is a facade over it.
	{"Shared", []string{"internal", "internal/jsoncodec"}},
	{"Codec", []string{"codec"}},       // typed values to JSON and back, for both ends
	{"Contract", []string{"contract"}}, // a service declared once
	{"Conn", []string{"runtime"}},      // the host side of one connection
	{"SDK", []string{"plugin"}},
	{"Platform", []string{"platform"}},
	{"Lifecycle", []string{"lifecycle"}},
	{"Discovery", []string{"discovery"}},
	{"Registry", []string{"registry"}},
	{"Control", []string{"controlplane"}},
	{"CLI", []string{"cmd"}},
	// Programs, the docs' checks and test tools, which may use anything.
	{"Programs", []string{"examples", "e2e", "docs", "internal/apisnap"}},
}

// never are the parts a part must not depend on, directly or through others, whatever
// their layers (the architecture's "never" arrows).
var never = []struct{ from, to, why string }{
	{"Conn", "Platform", "the protocol engine knows no processes"},
	{"Platform", "Conn", "process trees know no protocol"},
	{"SDK", "Conn", "the adapter side shares only the wire with the host"},
	{"SDK", "Lifecycle", "adapters do not supervise"},
	{"Wire", "Conn", "the codec is below the engine"},
	{"Limits", "Wire", "numbers depend on nothing"},
	{"Discovery", "Lifecycle", "finding is not starting"},
	{"Lifecycle", "Registry", "layers only look down"},
	{"Registry", "Control", "the embedded front door knows no daemon"},
	{"Platform", "Lifecycle", "process trees know no adapters"},
	{"Registry", "SDK", "the host never imports the adapter SDK"},
	{"Discovery", "Platform", "finding files needs no process trees"},
	{"Codec", "Conn", "values know no connection"},
}

// layerOf returns the index in order of the layer of the module package path (relative
// to the module), and whether it has one.
func layerOf(path string) (int, bool) {
	best, at := -1, -1
	for i, l := range order {
		for _, d := range l.dirs {
			if (path == d || strings.HasPrefix(path, d+"/")) && len(d) > best {
				best, at = len(d), i
			}
		}
	}
	return at, at >= 0
}

// partIndex returns the index in order of the named layer.
func partIndex(t *testing.T, name string) int {
	t.Helper()
	i := slices.IndexFunc(order, func(l layer) bool { return l.name == name })
	if i < 0 {
		t.Fatalf("no layer is named %q", name)
	}
	return i
}

// check returns what is wrong with graph (module package -> the module packages it
// imports, paths relative to the module): a package in no layer, an import of a higher
// layer, a dependency a never arrow rules out. Sorted.
func check(t *testing.T, graph map[string][]string) []string {
	var bad []string
	for pkg, imports := range graph {
		from, ok := layerOf(pkg)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s is in no layer: add its directory to order", pkg))
			continue
		}
		for _, imp := range imports {
			if to, ok := layerOf(imp); ok && to > from {
				bad = append(bad, fmt.Sprintf("%s (%s) imports %s (%s), a higher layer", pkg, order[from].name, imp, order[to].name))
			}
		}
	}
	for _, n := range never {
		from, to := partIndex(t, n.from), partIndex(t, n.to)
		for pkg := range graph {
			if l, _ := layerOf(pkg); l != from {
				continue
			}
			if path := reach(graph, pkg, to); path != nil {
				bad = append(bad, fmt.Sprintf("%s (%s) depends on %s (%s): %s; %s", pkg, n.from, path[len(path)-1], n.to, strings.Join(path, " -> "), n.why))
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// reach returns an import path from pkg to a package of layer to (pkg first), or nil.
func reach(graph map[string][]string, pkg string, to int) []string {
	seen := map[string]bool{pkg: true}
	var walk func(p string) []string
	walk = func(p string) []string {
		for _, imp := range graph[p] {
			if seen[imp] {
				continue
			}
			seen[imp] = true
			if l, ok := layerOf(imp); ok && l == to {
				return []string{p, imp}
			}
			if rest := walk(imp); rest != nil {
				return append([]string{p}, rest...)
			}
		}
		return nil
	}
	return walk(pkg)
}

// importGraph lists the module's packages for goos with `go list` and returns each one's
// imports within the module (tests' imports left out: a test may use anything).
func importGraph(t *testing.T, goos string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/...")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list for %s: %v\n%s", goos, err, stderr.Bytes())
	}
	graph := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg, ok := strings.CutPrefix(fields[0], module+"/")
		if !ok {
			continue // the module's root has no package
		}
		graph[pkg] = nil
		for _, imp := range fields[1:] {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				graph[pkg] = append(graph[pkg], rel)
			}
		}
	}
	if len(graph) < 20 {
		t.Fatalf("go list for %s listed %d packages of the module: not the module's graph", goos, len(graph))
	}
	return graph
}

// The module's packages, built for each OS the project checks, import only their own
// and lower layers and never reach a part the architecture rules out.
func TestImportGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list three times")
	}
	held := map[string]bool{}
	for _, goos := range []string{"linux", "windows", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			graph := importGraph(t, goos)
			for _, b := range check(t, graph) {
				t.Error(b)
			}
			for _, l := range order {
				for _, d := range l.dirs {
					for pkg := range graph {
						if pkg == d || strings.HasPrefix(pkg, d+"/") {
							held[d] = true
						}
					}
				}
			}
		})
	}
	// The table is exact: a directory it lists that holds no package (moved away) is
	// an error, not a silent exception.
	for _, l := range order {
		for _, d := range l.dirs {
			if !held[d] {
				t.Errorf("order lists %s (%s), which holds no package", d, l.name)
			}
		}
	}
}

// The order table is strict: a package of the module's internal/ is in the shared layer
// (it imports only Limits, Wire and other shared packages), or is a test or build tool
// with the programs. A package only an upper layer uses lives under that layer's own
// directory (platform/internal, controlplane/internal, cmd/adapterctl/internal), never
// in internal/ placed higher.
func TestInternalIsShared(t *testing.T) {
	shared, programs := partIndex(t, "Shared"), partIndex(t, "Programs")
	for i, l := range order {
		for _, d := range l.dirs {
			if (d == "internal" || strings.HasPrefix(d, "internal/")) && i != shared && i != programs {
				t.Errorf("order places %s in layer %s: internal/ holds only what several layers share", d, l.name)
			}
		}
	}
}

// check finds an upward import, a never arrow crossed through another package, and a
// package in no layer; it accepts imports of the same and lower layers.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name  string
		graph map[string][]string
		want  []string
	}{
		{"down", map[string][]string{
			"registry": {"lifecycle", "codec", "internal/proto"}, "lifecycle": {"runtime", "platform"},
			"runtime": {"internal/proto"}, "internal/proto": {"wire", "limits"}, "wire": nil,
			"limits": nil, "codec": {"internal/proto"}, "platform": nil,
			"cmd/adapterctl": {"cmd/adapterctl/internal/systemd"}, "cmd/adapterctl/internal/systemd": nil,
		}, nil},
		{"up", map[string][]string{"internal/proto": {"runtime"}, "runtime": nil},
			[]string{"internal/proto (Shared) imports runtime (Conn), a higher layer"}},
		{"internal above its parent's layer", map[string][]string{"internal/dirwatch": {"runtime"}, "runtime": nil},
			[]string{"internal/dirwatch (Shared) imports runtime (Conn), a higher layer"}},
		{"never, through another part", map[string][]string{
			"plugin": {"codec"}, "codec": {"runtime"}, "runtime": nil,
		}, []string{
			"codec (Codec) depends on runtime (Conn): codec -> runtime; values know no connection",
			"codec (Codec) imports runtime (Conn), a higher layer",
			"plugin (SDK) depends on runtime (Conn): plugin -> codec -> runtime; the adapter side shares only the wire with the host",
		}},
		{"in no layer", map[string][]string{"tools/x": nil}, []string{"tools/x is in no layer: add its directory to order"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := check(t, c.graph); !slices.Equal(got, c.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}
