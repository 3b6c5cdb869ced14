package e2e

import (
	"context"
	"encoding/json"
	"math"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/e2e/contractapi"
	"github.com/adapterkit/adapterkit/e2e/typedapi"
	"github.com/adapterkit/adapterkit/registry"
)

// One contract, declared once in Go (e2e/contractapi: every kind the codec writes, and
// e2e.typed's Event), goes to a schema (adapterctl contract schema), to TypeScript,
// Python and Rust types (adapterctl contract gen), and to an adapter in each language
// written with them (e2e/testdata/contractgen: each method returns its params). The
// generated files pass tsc --strict, mypy --strict and cargo; each adapter passes
// adapterctl check --contract, and every value the Go host's typed client sends comes
// back exactly. A language whose toolchain is missing is skipped, saying which, unless
// $ADAPTERKIT_REQUIRE_SDKS names it (CI names all three).
func TestContractGen(t *testing.T) {
	if goruntime.GOOS == "windows" {
		t.Skip("script adapters cannot run on Windows, where only an .exe is launched")
	}
	ctl := buildBinT(t, "cmd/adapterctl")
	dir := t.TempDir()
	schema := filepath.Join(dir, "schema.json")
	adapterctl(t, ctl, "contract", "schema", "-o", schema, "./contractapi")
	for _, lang := range []struct {
		name  string
		build func(t *testing.T, gen string) string
	}{
		{"typescript", buildContractTS},
		{"python", buildContractPy},
		{"rust", buildContractRust},
	} {
		t.Run(lang.name, func(t *testing.T) {
			gen := filepath.Join(t.TempDir(), "gen")
			adapterctl(t, ctl, "contract", "gen", "-lang", lang.name, "-o", gen, "./contractapi")
			exe := lang.build(t, gen)
			out, err := exec.Command(ctl, "check", "--contract", schema, exe).CombinedOutput()
			if err != nil {
				t.Fatalf("adapterctl check --contract: %v\n%s", err, out)
			}
			contractRoundTrip(t, exe)
		})
	}
}

// adapterctl runs the command in e2e/ and fails the test if it fails.
func adapterctl(t *testing.T, ctl string, args ...string) {
	t.Helper()
	if out, err := exec.Command(ctl, args...).CombinedOutput(); err != nil {
		t.Fatalf("adapterctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// need skips the test when the tool is missing, unless lang is required.
func need(t *testing.T, lang, tool, how string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if sdkRequired(lang) {
			t.Fatalf("%s is not installed (ADAPTERKIT_REQUIRE_SDKS names %s)", tool, lang)
		}
		t.Skipf("%s is not installed: the %s adapter is not tested (%s)", tool, lang, how)
	}
	return p
}

// run runs a command in dir and fails the test if it fails.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeExe(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// buildContractTS compiles the generated file and the adapter with tsc --strict, against
// the SDK of this checkout (built by make adapters, else here).
func buildContractTS(t *testing.T, gen string) string {
	node := need(t, "typescript", "node", "install node >= 20")
	sdk, err := filepath.Abs("../sdk/typescript")
	if err != nil {
		t.Fatal(err)
	}
	tsc := filepath.Join(sdk, "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		if sdkRequired("typescript") {
			t.Fatalf("%s: %v (run make adapters, which installs the SDK's compiler)", tsc, err)
		}
		t.Skipf("the TypeScript SDK's compiler is not installed (%v): run make adapters", err)
	}
	if _, err := os.Stat(filepath.Join(sdk, "dist", "src", "contract.js")); err != nil {
		runIn(t, sdk, nil, tsc, "-p", "tsconfig.json")
	}
	dir := t.TempDir()
	copyFile(t, filepath.Join(gen, "contractapi.ts"), filepath.Join(dir, "contractapi.ts"))
	copyFile(t, "testdata/contractgen/adapter.ts", filepath.Join(dir, "adapter.ts"))
	if err := os.MkdirAll(filepath.Join(dir, "node_modules", "@adapterkit"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sdk, filepath.Join(dir, "node_modules", "@adapterkit", "sdk")); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"package.json": `{"type":"module"}`,
		"tsconfig.json": `{"compilerOptions":{"target":"ES2022","module":"NodeNext","moduleResolution":"NodeNext",` +
			`"lib":["ES2022"],"types":[],"strict":true,"outDir":"out","skipLibCheck":true},"files":["adapter.ts","contractapi.ts"]}`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runIn(t, dir, nil, tsc, "-p", "tsconfig.json")
	return writeExe(t, filepath.Join(dir, "tscontract"), "#!"+node+"\nimport("+strconv.Quote(filepath.Join(dir, "out", "adapter.js"))+");\n")
}

// buildContractPy checks the generated file and the adapter with mypy --strict (for
// Python 3.9) where mypy is installed, and makes the adapter a script.
func buildContractPy(t *testing.T, gen string) string {
	py := need(t, "python", "python3", "install python3 >= 3.9")
	sdk, err := filepath.Abs("../sdk/python")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyFile(t, filepath.Join(gen, "contractapi.py"), filepath.Join(dir, "contractapi.py"))
	copyFile(t, "testdata/contractgen/adapter.py", filepath.Join(dir, "adapter.py"))
	if mypy, err := exec.LookPath("mypy"); err == nil {
		runIn(t, dir, []string{"MYPYPATH=" + sdk}, mypy, "--strict", "--python-version", "3.9",
			"--cache-dir", filepath.Join(dir, ".mypy_cache"), "adapter.py", "contractapi.py")
	} else if sdkRequired("python") {
		t.Fatal("mypy is not installed (ADAPTERKIT_REQUIRE_SDKS names python): apt-get install mypy")
	} else {
		t.Log("mypy is not installed: the generated Python is not type-checked (apt-get install mypy)")
	}
	return writeExe(t, filepath.Join(dir, "pycontract"), "#!"+py+"\nimport runpy, sys\n"+
		"sys.path[:0] = ["+strconv.Quote(sdk)+", "+strconv.Quote(dir)+"]\n"+
		"runpy.run_path("+strconv.Quote(filepath.Join(dir, "adapter.py"))+", run_name=\"__main__\")\n")
}

// buildContractRust builds the adapter with cargo, from Debian's packaged crates when
// they are installed (offline, as sdk/make.sh does), else from cargo's own sources.
func buildContractRust(t *testing.T, gen string) string {
	cargo := need(t, "rust", "cargo", "install cargo")
	sdk, err := filepath.Abs("../sdk/rust")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyFile(t, filepath.Join(gen, "contractapi.rs"), filepath.Join(dir, "src", "contractapi.rs"))
	copyFile(t, "testdata/contractgen/main.rs", filepath.Join(dir, "src", "main.rs"))
	manifest := "[package]\nname = \"rscontract\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n" +
		"[dependencies]\nadapterkit = { path = " + strconv.Quote(sdk) + " }\n" +
		"serde = { version = \"1\", features = [\"derive\"] }\nserde_json = \"1\"\n\n[workspace]\n"
	if err := os.WriteFile(filepath.Join(dir, "Cargo.toml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	var flags []string
	debian := os.Getenv("ADAPTERKIT_DEBIAN_CRATES")
	if debian == "" {
		debian = "/usr/share/cargo/registry"
	}
	if m, _ := filepath.Glob(filepath.Join(debian, "serde_json-[0-9]*")); len(m) > 0 && os.Getenv("ADAPTERKIT_RUST_CRATES") != "cargo" {
		flags = []string{"--offline", "--config", `source.crates-io.replace-with="debian-packages"`,
			"--config", "source.debian-packages.directory=" + strconv.Quote(debian)}
		runIn(t, dir, nil, cargo, append([]string{"generate-lockfile", "--quiet"}, flags...)...)
	}
	// The SDK's own target directory: its dependencies are built once (make adapters).
	target := filepath.Join(sdk, "target")
	runIn(t, dir, []string{"CARGO_TARGET_DIR=" + target}, cargo, append([]string{"build", "--release", "--quiet"}, flags...)...)
	exe := filepath.Join(dir, "rscontract")
	copyFile(t, filepath.Join(target, "release", "rscontract"), exe)
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

// contractRoundTrip calls every method of e2e.contract on the adapter with the Go
// host's typed client: each value comes back as it was sent.
func contractRoundTrip(t *testing.T, exe string) {
	reg, h := openSDK(t, sdkEcho{name: filepath.Base(exe), path: exe, env: []string{"PATH=" + os.Getenv("PATH")}})
	defer closeSDK(t, reg)
	c, err := registry.NewClient(h, contractapi.Service)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
	defer cancel()
	for name, e := range map[string]contractapi.Everything{"max": everything(true), "min": everything(false), "zero": {Num: "0"}} {
		got, err := registry.Call(ctx, c, contractapi.EverythingMethod, e)
		if err != nil {
			t.Fatalf("everything %s: %v", name, err)
		}
		sameValue(t, "everything "+name, e, got)
	}
	at := time.Date(2026, 12, 3, 8, 7, 15, 123456789, time.FixedZone("", -(3*3600+30*60)))
	for name, e := range map[string]typedapi.Event{
		"full": {Origin: typedapi.Origin{Host: netip.MustParseAddr("2001:db8::1"), Seen: at}, At: at, When: &at,
			Peer: netip.MustParseAddr("10.0.0.1"), Peers: []netip.Addr{netip.MustParseAddr("::1")}, Level: typedapi.High,
			ByLevel: map[typedapi.Level]int64{typedapi.Low: math.MinInt64, typedapi.High: math.MaxInt64},
			ByAddr:  map[netip.Addr]string{netip.MustParseAddr("192.0.2.1"): "ünïcödé 😀"}, Payload: []byte{0, 255},
			Timeout: math.MaxInt64, Extra: map[string]any{"n": 1.5, "l": []any{"x", nil, true}}, Seq: math.MaxUint64},
		"empty": {Payload: []byte{}, Peers: []netip.Addr{}, ByLevel: map[typedapi.Level]int64{}},
	} {
		got, err := registry.Call(ctx, c, contractapi.EventMethod, e)
		if err != nil {
			t.Fatalf("event %s: %v", name, err)
		}
		sameValue(t, "event "+name, e, got)
	}
	deep := contractapi.Tree{}
	for i, n := 0, deep; i < 100; i++ {
		n["é"+strconv.Itoa(i)] = contractapi.Tree{}
		n = n["é"+strconv.Itoa(i)]
	}
	for name, tr := range map[string]contractapi.Tree{"empty": {}, "deep": deep, "leaf": {"a": {"b": nil}}} {
		got, err := registry.Call(ctx, c, contractapi.TreeMethod, tr)
		if err != nil {
			t.Fatalf("tree %s: %v", name, err)
		}
		sameValue(t, "tree "+name, tr, got)
	}
}

// sameValue fails the test unless got is want: the same JSON text from the codec (the
// same instants at the same offsets, the same digits) and, times aside, the same Go value.
func sameValue[T any](t *testing.T, what string, want, got T) {
	t.Helper()
	w, err := codec.Append(nil, want)
	if err != nil {
		t.Fatal(err)
	}
	g, err := codec.Append(nil, got)
	if err != nil {
		t.Fatal(err)
	}
	if string(w) != string(g) {
		t.Errorf("%s: sent\n%s\ngot back\n%s", what, w, g)
		return
	}
	// The text is the same; the values too, once times are compared by their text.
	var a, b any
	if json.Unmarshal(w, &a) != nil || json.Unmarshal(g, &b) != nil || !reflect.DeepEqual(a, b) {
		t.Errorf("%s: the values differ", what)
	}
}

// everything returns an Everything with every field set, its integers at their types'
// extremes (maxima: the largest, else the smallest), as package contract's tests send.
func everything(maxima bool) contractapi.Everything {
	pick := func(lo, hi int64) int64 {
		if maxima {
			return hi
		}
		return lo
	}
	u8 := uint8(200)
	pu8 := &u8
	i64 := pick(math.MinInt64, math.MaxInt64)
	at := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", -(23*3600+59*60)))
	if !maxima {
		at = time.Date(0, 2, 29, 0, 0, 0, 1, time.UTC)
	}
	e := contractapi.Everything{
		Embedded: contractapi.Embedded{E: math.MaxUint16}, I: int(pick(math.MinInt, math.MaxInt)), I8: int8(pick(math.MinInt8, math.MaxInt8)),
		I16: int16(pick(math.MinInt16, math.MaxInt16)), I32: int32(pick(math.MinInt32, math.MaxInt32)), I64: i64,
		U: math.MaxUint, U8: math.MaxUint8, U16: math.MaxUint16, U32: math.MaxUint32, U64: math.MaxUint64,
		F32: math.MaxFloat32, F64: -math.MaxFloat64, S: "a\u2028\"<>&\x00 😀 𝄞", Bool: true, Bytes: []byte{0, 1, 2, 255},
		Blob: contractapi.Blob("xy"), Arr: [2]int16{math.MinInt16, 7}, Sl: []string{}, Ptr: &i64, PP: &pu8, At: at, AtP: &at,
		Wait: time.Duration(i64), Addr: netip.MustParseAddr("fe80::1%eth0"), Raw: json.RawMessage(`{"k":[1,"x",null]}`),
		Num: "-12345678901234567890.5e-3", Any: map[string]any{"n": 1.5, "l": []any{"x", nil, true}}, Lvl: 1,
		ByInt: map[int16]string{math.MinInt16: "lo", math.MaxInt16: "hi"}, ByUint: map[uint8]bool{0: true, 255: false},
		ByI64: map[int64]int{math.MinInt64: 1, math.MaxInt64: 2}, ByU64: map[uint64]int{math.MaxUint64: 3},
		ByStr: map[string]float32{"": math.SmallestNonzeroFloat32}, ByAddr: map[netip.Addr]int{netip.MustParseAddr("10.0.0.1"): 1},
		ByTime: map[time.Time]int{at: 1}, Tree: contractapi.Tree{"a": contractapi.Tree{"b": nil}},
		Link: contractapi.Link{N: -128, Up: &contractapi.Link{N: 127}}, Links: []*contractapi.Link{{Up: &contractapi.Link{}}, nil},
		Omit: "x", NoTag: true,
	}
	e.H = int32(pick(math.MinInt32, math.MaxInt32))
	e.Anon.X = math.MaxUint32
	return e
}
