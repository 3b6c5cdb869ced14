package platform

import (
	"context"
	"testing"
)

// R63: Verify answers from proof already at hand even when its context has ended:
// a tree that is provably gone is never reported unverified by chance.
func TestVerifyEndedContextWithProof(t *testing.T) {
	requireRoot(t)
	requireCgroup(t)
	// Without a PID namespace a root host's cgroup proves the end of a sandboxed
	// adapter only: one outside may move processes out of it (TestCgroupEscapeUnverified).
	for _, is := range []struct {
		name string
		cfg  Config
	}{
		{"auto", Config{}},
		{"no-pidns-sandboxed", Config{Isolation: IsolationNoPIDNamespace, Sandbox: &Sandbox{}}},
	} {
		t.Run(is.name, func(t *testing.T) {
			for range 20 {
				tree := startHelper(t, is.cfg, "block")
				tree.Stdin().Close() // the helper exits on EOF
				if !tree.waitExited(ctxBound(t)) {
					t.Fatal("adapter not reaped")
				}
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				if err := tree.Verify(ctx); err != nil {
					t.Fatalf("Verify of an ended tree with an ended context: %v", err)
				}
			}
		})
	}
}
