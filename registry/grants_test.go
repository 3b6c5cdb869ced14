// Sandbox grants are a Linux matter (a sandbox is refused elsewhere), and the cases spell
// Unix paths and symbolic links.

//go:build !windows

package registry_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
)

// TestGrantOverlapConfig: of two adapters named in Config.Sandboxes, a grant of one
// (read, write or exec) beneath a write grant of the other is refused by
// Config.CheckGrants with a *GrantOverlapError naming both adapters and both paths,
// whatever the spelling of the paths (.., symbolic links, missing paths); shared read
// grants, a shared directory (equal grants), siblings and an adapter's own overlapping
// grants are not.
func TestGrantOverlapConfig(t *testing.T) {
	root := t.TempDir()
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	srv, other := filepath.Join(root, "srv"), filepath.Join(root, "other")
	for _, d := range []string{filepath.Join(srv, "kv"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "link") // -> srv
	if err := os.Symlink(srv, link); err != nil {
		t.Fatal(err)
	}
	j := filepath.Join // cleans: the "../" cases spell their paths by hand
	type want struct{ adapter, grant, writer, write string }
	tests := []struct {
		name      string
		kv, cache *platform.Sandbox
		want      *want // nil: accepted
	}{
		{"write contains read", &platform.Sandbox{Read: []string{j(srv, "kv")}}, &platform.Sandbox{Write: []string{srv}},
			&want{"kv", j(srv, "kv"), "cache", srv}},
		{"write contains write", &platform.Sandbox{Write: []string{j(srv, "kv")}}, &platform.Sandbox{Write: []string{srv}},
			&want{"kv", j(srv, "kv"), "cache", srv}},
		{"write contains exec", &platform.Sandbox{Exec: []string{j(srv, "kv", "tool")}}, &platform.Sandbox{Write: []string{srv}},
			&want{"kv", j(srv, "kv", "tool"), "cache", srv}},
		{"equal paths", &platform.Sandbox{Read: []string{srv}}, &platform.Sandbox{Write: []string{srv}}, nil},
		{"equal write paths", &platform.Sandbox{Write: []string{srv}}, &platform.Sandbox{Write: []string{srv}}, nil},
		{"equal through a link", &platform.Sandbox{Write: []string{link}}, &platform.Sandbox{Write: []string{srv}}, nil},
		{"shared, and beneath", &platform.Sandbox{Write: []string{srv}, Read: []string{j(srv, "kv")}}, &platform.Sandbox{Write: []string{srv}},
			&want{"kv", j(srv, "kv"), "cache", srv}},
		{"the other way round", &platform.Sandbox{Write: []string{srv}}, &platform.Sandbox{Read: []string{j(srv, "kv")}},
			&want{"cache", j(srv, "kv"), "kv", srv}},
		{"../ in the grant", &platform.Sandbox{Read: []string{other + "/../srv/kv"}}, &platform.Sandbox{Write: []string{srv}},
			&want{"kv", j(srv, "kv"), "cache", srv}},
		{"../ in the write grant", &platform.Sandbox{Read: []string{j(srv, "kv")}}, &platform.Sandbox{Write: []string{srv + "/kv/.."}},
			&want{"kv", j(srv, "kv"), "cache", srv}},
		{"../ through a missing directory", &platform.Sandbox{Read: []string{root + "/nope/../srv/kv"}}, &platform.Sandbox{Write: []string{srv}},
			&want{"kv", j(srv, "kv"), "cache", srv}},
		{"symlinked grant", &platform.Sandbox{Read: []string{j(link, "kv")}}, &platform.Sandbox{Write: []string{srv}},
			&want{"kv", j(link, "kv"), "cache", srv}},
		{"symlinked write grant", &platform.Sandbox{Read: []string{j(srv, "kv")}}, &platform.Sandbox{Write: []string{link}},
			&want{"kv", j(srv, "kv"), "cache", link}},
		{"missing paths compare as written", &platform.Sandbox{Read: []string{j(root, "nope", "kv")}}, &platform.Sandbox{Write: []string{j(root, "nope")}},
			&want{"kv", j(root, "nope", "kv"), "cache", j(root, "nope")}},
		{"write of the root", &platform.Sandbox{Read: []string{srv}}, &platform.Sandbox{Write: []string{"/"}},
			&want{"kv", srv, "cache", "/"}},
		{"siblings", &platform.Sandbox{Write: []string{j(srv, "kv")}}, &platform.Sandbox{Write: []string{j(srv, "kvx"), other}}, nil},
		{"write beneath the other's read", &platform.Sandbox{Read: []string{srv}}, &platform.Sandbox{Write: []string{j(srv, "kv")}}, nil},
		{"shared read", &platform.Sandbox{Read: []string{srv}, Exec: []string{srv}}, &platform.Sandbox{Read: []string{srv, j(srv, "kv")}}, nil},
		{"own grants overlap", &platform.Sandbox{Write: []string{srv}, Read: []string{j(srv, "kv")}, Exec: []string{j(srv, "kv")}},
			&platform.Sandbox{Write: []string{other}, Read: []string{j(other, "x")}}, nil},
		{"uncontained beside a writer", nil, &platform.Sandbox{Write: []string{srv}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &registry.Config{Sandboxes: map[string]*platform.Sandbox{"kv": tt.kv, "cache": tt.cache}}
			err := cfg.CheckGrants()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var oe *registry.GrantOverlapError
			if !errors.As(err, &oe) || !errors.Is(err, platform.ErrInvalidConfig) {
				t.Fatalf("CheckGrants = %v, want a *GrantOverlapError matching platform.ErrInvalidConfig", err)
			}
			if got := (want{oe.Adapter, oe.Grant, oe.Writer, oe.Write}); got != *tt.want || oe.Executable {
				t.Errorf("refusal %+v, want %+v", oe, *tt.want)
			}
			msg := err.Error()
			for _, s := range []string{"adapter " + tt.want.adapter + "'s grant " + tt.want.grant, "adapter " + tt.want.writer + "'s write grant " + tt.want.write, "refused"} {
				if !strings.Contains(msg, s) {
					t.Errorf("%q does not say %q", msg, s)
				}
			}
		})
	}
	var nilCfg *registry.Config
	if err := nilCfg.CheckGrants(); err != nil {
		t.Errorf("nil Config: %v", err)
	}
}
