package platform_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/adapterkit/adapterkit/platform"
)

// Start refuses a relative path with a typed cause; nothing is resolved or run.
func ExampleStart_relativePath() {
	_, err := platform.Start(context.Background(), platform.Config{Path: "bin/adapter"})
	var le *platform.LaunchError
	fmt.Println(errors.As(err, &le), errors.Is(err, platform.ErrNotAbsolute))
	// Output: true true
}

// The stop sequence a lifecycle runs: close stdin, give the adapter a grace period to
// exit, kill the tree, verify it is gone, release.
func ExampleTree_Verify() {
	tree, err := platform.Start(context.Background(), platform.Config{Path: "/usr/bin/cat"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tree.Close()
	_, _ = io.WriteString(tree.Stdin(), "ping\n")
	_ = tree.Stdin().Close()
	select {
	case <-tree.Exited():
	case <-time.After(5 * time.Second): // the disconnect grace
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // cleanup bound
	defer cancel()
	_ = tree.Kill(ctx)
	if err := tree.Verify(ctx); errors.Is(err, platform.ErrUnverified) {
		fmt.Println("keep the adapter's files reserved:", err)
	}
}

func ExampleMechanism_String() {
	fmt.Println(platform.MechCgroup | platform.MechPidNamespace | platform.MechParentDeathSignal)
	fmt.Println(platform.MechJobObject)
	// Output:
	// cgroup|pidns|pdeathsig
	// job
}
