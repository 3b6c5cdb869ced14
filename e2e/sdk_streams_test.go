package e2e

// The stream recipes of the language SDKs (docs/contracts.md "The chunks on the wire")
// under the Go host: each SDK's test.streams adapter, built on its recipe, takes an
// upload from registry.Upload and gives it back through registry.Download.
//
// The adapters are the SDK tests' own: sdk/python/tests/streams_adapter.py (run by
// python3), sdk/typescript/test/streams_adapter.ts (compiled to dist/ by `sdk/make.sh
// build typescript`, which `make adapters` runs) and sdk/rust/tests/streams/adapter.rs
// (the example "streams", built by `sdk/make.sh build rust`). One that is not there is
// skipped, unless $ADAPTERKIT_REQUIRE_SDKS names its language and
// $ADAPTERKIT_SDK_ADAPTERS says `make adapters` ran, where it fails.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// The contract of the SDKs' test.streams adapters.
type (
	streamsPutParams struct {
		Name      string `json:"name"`
		FailAfter int64  `json:"fail_after,omitempty"`
		Stall     bool   `json:"stall,omitempty"`
	}
	streamsDigest struct {
		Bytes  int64  `json:"bytes"`
		SHA256 string `json:"sha256"`
	}
	streamsGetParams struct {
		Name      string `json:"name"`
		FailAfter int64  `json:"fail_after,omitempty"`
		Hold      bool   `json:"hold,omitempty"`
	}
	streamsStatsParams struct {
		WaitAborted int64 `json:"wait_aborted"`
	}
	streamsStats struct {
		Uploads   int64 `json:"uploads"`
		Downloads int64 `json:"downloads"`
		Aborted   int64 `json:"aborted"`
	}
)

var (
	streamsService = contract.NewService("test.streams", 1)
	streamsPut     = contract.NewUpload[streamsPutParams, streamsDigest](streamsService, "put")
	streamsGet     = contract.NewDownload[streamsGetParams](streamsService, "get")
	streamsStat    = contract.NewMethod[streamsStatsParams, streamsStats](streamsService, "stats")
)

// sdkStreamAdapters returns the SDKs' test.streams adapters, as sdkEchoes do theirs.
func sdkStreamAdapters(t *testing.T) []sdkEcho {
	t.Helper()
	if goruntime.GOOS == "windows" {
		t.Skip("script adapters cannot run on Windows, where only an .exe is launched (R62)")
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	dir := t.TempDir()
	var out []sdkEcho
	add := func(name, lang, path, how string) sdkEcho {
		a := sdkEcho{name: name, path: path, env: env}
		if _, err := os.Stat(path); err != nil {
			if sdkRequired(lang) && sdkAdapterDir() != "" {
				t.Fatalf("%s: %v (ADAPTERKIT_REQUIRE_SDKS names %s; %s)", name, err, lang, how)
			}
			a.missing = fmt.Sprintf("%s is not built (%s): %v", name, how, err)
		}
		return a
	}

	if py, err := exec.LookPath("python3"); err == nil {
		// A launcher of the script, which finds the SDK and the recipe beside it.
		script, err := filepath.Abs("../sdk/python/tests/streams_adapter.py")
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "pystreams_v1.0.0")
		launcher := fmt.Sprintf("#!%s\nimport runpy\nrunpy.run_path(%q, run_name=\"__main__\")\n", py, script)
		if err := os.WriteFile(p, []byte(launcher), 0o755); err != nil {
			t.Fatal(err)
		}
		out = append(out, sdkEcho{name: "pystreams", path: p, env: env})
	} else {
		out = append(out, add("pystreams", "python", "python3", "install python3"))
	}

	js, err := filepath.Abs("../sdk/typescript/dist/test/streams_adapter.js")
	if err != nil {
		t.Fatal(err)
	}
	ts := add("tsstreams", "typescript", js, "sdk/make.sh build typescript DIR compiles it")
	if ts.missing == "" {
		// A launcher, as sdk/make.sh writes the TypeScript echo's.
		ts.path = filepath.Join(dir, "tsstreams_v1.0.0")
		launcher := fmt.Sprintf("#!/usr/bin/env node\nimport(%q);\n", js)
		if err := os.WriteFile(ts.path, []byte(launcher), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out = append(out, ts)

	rs, err := filepath.Abs("../sdk/rust/target/release/examples/streams")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, add("rsstreams", "rust", rs, "sdk/make.sh build rust DIR builds it"))
}

// An upload of 8 MiB goes up in chunks, read in order by the recipe; it comes back down
// byte for byte; a handler's error fails the chunk it did not take, or the read after
// its last bytes; a download closed early is forgotten.
func TestSDKStreams(t *testing.T) {
	blob := make([]byte, 8<<20+123)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(blob)
	sum := sha256.Sum256(blob)
	want := streamsDigest{Bytes: int64(len(blob)), SHA256: hex.EncodeToString(sum[:])}

	for _, a := range sdkStreamAdapters(t) {
		t.Run(a.name, func(t *testing.T) {
			if a.missing != "" {
				t.Skip(a.missing)
			}
			reg, h := openSDK(t, a)
			defer closeSDK(t, reg)
			c, err := registry.NewClient(h, streamsService)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()

			got, err := registry.Upload(ctx, c, streamsPut, streamsPutParams{Name: "b"}, bytes.NewReader(blob))
			if err != nil || got != want {
				t.Fatalf("Upload = %+v, %v; want %+v", got, err, want)
			}
			st := registry.Download(ctx, c, streamsGet, streamsGetParams{Name: "b"})
			back, err := io.ReadAll(st)
			_ = st.Close()
			if err != nil || !bytes.Equal(back, blob) {
				t.Fatalf("Download: %d bytes (want %d), equal %v, %v", len(back), len(blob), bytes.Equal(back, blob), err)
			}

			// The handler fails within chunk 1 (at 4 MiB): chunk 2 is the first it did not take.
			_, err = registry.Upload(ctx, c, streamsPut, streamsPutParams{Name: "f", FailAfter: 4 << 20}, bytes.NewReader(blob))
			var ce *registry.ChunkError
			if !errors.As(err, &ce) || ce.Index != 2 || runtime.CodeOf(err) != wire.CodeFailed {
				t.Errorf("Upload failing after 4 MiB: %v; want a failed ChunkError of chunk 2", err)
			}

			st = registry.Download(ctx, c, streamsGet, streamsGetParams{Name: "b", FailAfter: 5 << 20})
			back, err = io.ReadAll(st)
			_ = st.Close()
			if !errors.As(err, &ce) || runtime.CodeOf(err) != wire.CodeFailed || !bytes.Equal(back, blob[:5<<20]) {
				t.Errorf("Download failing after 5 MiB: %d bytes, %v; want the first 5 MiB and a failed ChunkError", len(back), err)
			}

			st = registry.Download(ctx, c, streamsGet, streamsGetParams{Name: "b"})
			if _, err := io.ReadFull(st, make([]byte, 1)); err != nil {
				t.Fatal(err)
			}
			_ = st.Close() // before the end: tells the adapter

			stats, err := registry.Call(ctx, c, streamsStat, streamsStatsParams{})
			if err != nil || stats != (streamsStats{}) {
				t.Errorf("stats = %+v, %v; want no stream under way", stats, err)
			}
		})
	}
}
