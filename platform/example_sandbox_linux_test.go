package platform_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/adapterkit/adapterkit/platform"
)

// A sandboxed cat may read what it is granted and nothing else: here /bin/cat reads a
// granted file, then a file outside its grants, which the kernel refuses.
func ExampleSandbox() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	granted, secret := filepath.Join(dir, "granted"), filepath.Join(dir, "secret")
	_ = os.WriteFile(granted, []byte("granted\n"), 0o644)
	_ = os.WriteFile(secret, []byte("secret\n"), 0o644)
	stderr, _ := os.Create(filepath.Join(dir, "stderr"))
	defer stderr.Close()
	tree, err := platform.Start(context.Background(), platform.Config{
		Path: "/bin/cat", Args: []string{granted, secret}, Stderr: stderr,
		Sandbox: &platform.Sandbox{Read: []string{granted}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tree.Close()
	_ = tree.Stdin().Close()
	out, _ := io.ReadAll(tree.Stdout())
	<-tree.Exited()
	ctx := context.Background()
	_ = tree.Kill(ctx)
	_ = tree.Verify(ctx)
	fmt.Print(string(out))
	errs, _ := os.ReadFile(stderr.Name())
	fmt.Println(strings.Contains(string(errs), "Permission denied"))
	fmt.Println(tree.Supervision().Mechanism.Has(platform.MechLandlock | platform.MechSeccomp))
	// Output:
	// granted
	// true
	// true
}
