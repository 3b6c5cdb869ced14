//go:build linux

package registry_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/registry"
)

// A handle opened by name follows a new version dropped into the directory: Rescan
// starts it, checks it and gives it the new calls.
func ExampleRegistry_Rescan() {
	dir, err := os.MkdirTemp("", "adapters")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	bin, err := os.ReadFile(filepath.Join(adapterDir, testkit.Versioned.Name))
	if err != nil {
		panic(err)
	}
	install := func(version string) { // written aside, then moved in
		tmp := filepath.Join(dir, ".upg.tmp")
		if err := os.WriteFile(tmp, bin, 0o755); err != nil {
			panic(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "upg_v"+version)); err != nil {
			panic(err)
		}
	}
	install("1.0.0")

	ctx := context.Background()
	reg := registry.New(&registry.Config{Dirs: []string{dir}, Upgrade: &registry.Upgrade{Settle: 10 * time.Millisecond}})
	defer reg.Close(ctx)
	h, err := reg.Open(ctx, "upg", nil) // follows 1.x
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Upgrades().Version)

	install("1.1.0")
	if err := reg.Rescan(ctx); err != nil {
		panic(err)
	}
	st := h.Upgrades()
	fmt.Println(st.Version, st.Upgrades, st.Err, filepath.Base(h.Path()))
	// Output:
	// 1.0.0
	// 1.1.0 1 <nil> upg_v1.1.0
}
