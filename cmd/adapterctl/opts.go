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
	envFiles      stringList
	inheritEnv    bool
	adapterStderr bool
	sandbox       sandboxOpts
	// allowGroupWritable is --allow-group-writable (see registerTrust).
	allowGroupWritable bool
	// isolation is --isolation, of the commands that register it (registerIsolation).
	isolation platform.Isolation
	logOpts
}

func (o *adapterOpts) register(f *flags) {
	f.BoolVar(&o.json, "json", false, "print machine-readable JSON (errors: one JSON object on stderr)")
	f.Var(&o.dirs, "dir", "directory to search for NAME[@CONSTRAINT] (repeatable; default $"+pathEnv+")")
	f.StringVar(&o.config, "config", "", "configuration sent in initialize: one JSON `object` (default {})")
	f.Var(&o.env, "env", "`KEY=VALUE` added to the adapter's environment (repeatable; a KEY given again, or inherited, takes the last value)")
	f.Var(&o.envFiles, "env-file", "`FILE` of KEY=VALUE lines added to the adapter's environment before --env (repeatable;\nblank lines and lines starting with # are skipped; keeps secrets out of the command line)")
	f.BoolVar(&o.inheritEnv, "inherit-env", false, "pass adapterctl's whole environment to the adapter")
	f.BoolVar(&o.adapterStderr, "adapter-stderr", false, "copy the adapter's stderr to adapterctl's stderr (default: discarded)")
	o.registerLogs(f)
	o.sandbox.register(f)
	registerTrust(f, &o.allowGroupWritable)
}

// readEnvFile reads the KEY=VALUE lines of an --env-file: blank lines and lines
// starting with # are skipped; a value is taken as it is (no quotes, no expansion,
// a trailing carriage return dropped).
func readEnvFile(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("--env-file: %v", err)
	}
	return parseEnvFile(path, b)
}

// parseEnvFile parses the contents b of the --env-file path (see readEnvFile).
func parseEnvFile(path string, b []byte) ([]string, error) {
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if k, _, ok := strings.Cut(line, "="); !ok || k == "" || strings.ContainsAny(k, " \t") || strings.IndexByte(line, 0) >= 0 {
			return nil, usagef("--env-file %s:%d is not KEY=VALUE", path, i+1)
		}
		out = append(out, line)
	}
	return out, nil
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

// dedupEnv keeps one entry per KEY, the last one given, in the place of the first:
// "--inherit-env --env PATH=/safe" gives the adapter one PATH, /safe (the platform
// package does the same for every start; the daemon's Status and logs see it done).
func dedupEnv(env []string) []string {
	last := make(map[string]int, len(env))
	for i, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		last[k] = i
	}
	out := make([]string, 0, len(last))
	placed := make(map[string]bool, len(last))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !placed[k] {
			placed[k] = true
			out = append(out, env[last[k]])
		}
	}
	return out
}

// environ returns the adapter's environment: empty unless --inherit-env, --env-file
// or --env; a KEY given more than once takes its last value.
func (o *adapterOpts) environ() ([]string, error) {
	var out []string
	if o.inheritEnv {
		out = os.Environ()
	}
	for _, path := range o.envFiles {
		kvs, err := readEnvFile(path)
		if err != nil {
			return nil, err
		}
		out = append(out, kvs...)
	}
	for _, kv := range o.env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, usagef("--env %q is not KEY=VALUE", kv)
		}
		out = append(out, kv)
	}
	return dedupEnv(out), nil
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
	reg := registry.New(&registry.Config{Dirs: dirs, AllowGroupWritable: o.allowGroupWritable})
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
	sb, err := o.sandbox.policy()
	if err != nil {
		return lifecycle.Config{}, err
	}
	cfg := lifecycle.Config{Path: t.Path, Env: environ, Configuration: cfgJSON, Stderr: stderr, Name: t.Name, Sandbox: sb, Isolation: o.isolation}
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
	if _, err := o.sandbox.policy(); err != nil {
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
