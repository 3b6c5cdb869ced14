package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
)

// pathEnv names the environment variable listing the directories searched for
// NAME[@CONSTRAINT] references when no --dir is given.
const pathEnv = "ADAPTERKIT_PATH"

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// adapterOpts are the flags of every command that starts an adapter.
type adapterOpts struct {
	json          bool
	dirs          stringList
	config        string
	env           stringList
	inheritEnv    bool
	adapterStderr bool
	logOpts
}

func (o *adapterOpts) register(f *flags) {
	f.BoolVar(&o.json, "json", false, "print machine-readable JSON (errors: one JSON object on stderr)")
	f.Var(&o.dirs, "dir", "directory to search for NAME[@CONSTRAINT] (repeatable; default $"+pathEnv+")")
	f.StringVar(&o.config, "config", "", "configuration sent in initialize: one JSON `object` (default {})")
	f.Var(&o.env, "env", "`KEY=VALUE` added to the adapter's environment (repeatable)")
	f.BoolVar(&o.inheritEnv, "inherit-env", false, "pass adapterctl's whole environment to the adapter")
	f.BoolVar(&o.adapterStderr, "adapter-stderr", false, "copy the adapter's stderr to adapterctl's stderr (default: discarded)")
	o.registerLogs(f)
}

// configuration returns the --config object, or a usage error.
func (o *adapterOpts) configuration() (json.RawMessage, error) {
	if o.config == "" {
		return nil, nil
	}
	if err := proto.ValidateParams([]byte(o.config)); err != nil {
		return nil, usagef("--config is not one JSON object: %v", err)
	}
	return json.RawMessage(o.config), nil
}

// environ returns the adapter's environment: empty unless --inherit-env or --env.
func (o *adapterOpts) environ() ([]string, error) {
	var out []string
	if o.inheritEnv {
		out = os.Environ()
	}
	for _, kv := range o.env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, usagef("--env %q is not KEY=VALUE", kv)
		}
		out = append(out, kv)
	}
	return out, nil
}

// searchDirs returns the --dir directories, or those of $ADAPTERKIT_PATH, made
// absolute (see paths.go), and a note for each that was relative.
func (o *adapterOpts) searchDirs() ([]string, []string) {
	if len(o.dirs) > 0 {
		return absPaths(o.dirs)
	}
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv(pathEnv)) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	return absPaths(dirs)
}

// target is a resolved ADAPTER argument.
type target struct {
	Path string `json:"path"`
	Name string `json:"name"`
}

// resolve turns the ADAPTER argument into an absolute executable path: a path made
// absolute against the working directory (the library launches by absolute path
// only, R61, A31), NAME[@CONSTRAINT] through discovery (registry.Lookup). It returns
// notes naming the absolute paths used for relative ones.
func (o *adapterOpts) resolve(ctx context.Context, ref string) (target, []string, error) {
	var notes []string
	dirs, dirNotes := o.searchDirs()
	if registry.IsPath(ref) {
		if abs, rel := absPath(ref); rel {
			notes = append(notes, resolvedNote(ref, abs))
			ref = abs
		}
	} else if len(dirs) == 0 {
		return target{}, nil, usagef("%q names an adapter, but there is no directory to search: give --dir DIR or set $%s", ref, pathEnv)
	} else {
		notes = append(notes, dirNotes...)
	}
	reg := registry.New(&registry.Config{Dirs: dirs})
	defer reg.Close(ctx) // nothing was opened: closing only refuses further use
	path := ref
	if registry.IsPath(ref) {
		if !filepath.IsAbs(ref) {
			return target{}, notes, fmt.Errorf("adapter %q: %w", ref, platform.ErrNotAbsolute)
		}
		path = filepath.Clean(ref)
	} else {
		a, err := reg.Lookup(ctx, ref)
		if err != nil {
			return target{}, notes, err
		}
		path = a.Path
	}
	name := filepath.Base(path)
	if n, _, perr := discovery.ParseFileName(name, ""); perr == nil {
		name = n
	}
	return target{Path: path, Name: name}, notes, nil
}

// lifecycleConfig returns the lifecycle configuration to open t with.
func (o *adapterOpts) lifecycleConfig(e *env, t target) (lifecycle.Config, error) {
	cfgJSON, err := o.configuration()
	if err != nil {
		return lifecycle.Config{}, err
	}
	environ, err := o.environ()
	if err != nil {
		return lifecycle.Config{}, err
	}
	var stderr io.Writer
	if o.adapterStderr {
		stderr = e.stderr
	}
	cfg := lifecycle.Config{Path: t.Path, Env: environ, Configuration: cfgJSON, Stderr: stderr, Name: t.Name}
	return cfg, o.applyLogs(e.stderr, t.Name, &cfg)
}

// prepare validates the local inputs, then resolves the adapter: nothing is started
// before every argument is known to be usable.
func (o *adapterOpts) prepare(ctx context.Context, e *env, ref string) (target, lifecycle.Config, error) {
	if _, err := o.configuration(); err != nil {
		return target{}, lifecycle.Config{}, err
	}
	if _, err := o.environ(); err != nil {
		return target{}, lifecycle.Config{}, err
	}
	if _, err := o.level(); err != nil {
		return target{}, lifecycle.Config{}, err
	}
	t, notes, err := o.resolve(ctx, ref)
	printNotes(e, "", o.json, notes)
	if err != nil {
		return target{}, lifecycle.Config{}, err
	}
	cfg, err := o.lifecycleConfig(e, t)
	return t, cfg, err
}

// checkTimeout validates a duration flag: positive and at most max.
func checkTimeout(name string, d time.Duration, max time.Duration) error {
	if d <= 0 {
		return usagef("%s must be positive, not %v", name, d)
	}
	if d > max {
		return usagef("%s may be at most %v (the protocol's call deadline)", name, max)
	}
	return nil
}

// count returns n followed by the singular or the plural noun.
func count(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
