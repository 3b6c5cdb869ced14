package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEnviron: --inherit-env, --env-file and --env give the adapter one entry per
// KEY, the last given (--env over --env-file over the inherited environment).
func TestEnviron(t *testing.T) {
	t.Setenv("PATH", "/inherited/bin")
	t.Setenv("ADAPTERKIT_TEST_KEPT", "yes")
	file := filepath.Join(t.TempDir(), "env")
	if err := os.WriteFile(file, []byte("# secrets\nTOKEN=s3cret=with=equals\n\nPATH=/from/file\r\nLEVEL=debug\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := adapterOpts{inheritEnv: true, envFiles: stringList{file}, env: stringList{"PATH=/safe", "LEVEL=info"}}
	env, err := o.environ()
	if err != nil {
		t.Fatal(err)
	}
	count := func(key string) (n int, val string) {
		for _, kv := range env {
			if k, v, _ := strings.Cut(kv, "="); k == key {
				n, val = n+1, v
			}
		}
		return n, val
	}
	for key, want := range map[string]string{"PATH": "/safe", "LEVEL": "info", "TOKEN": "s3cret=with=equals", "ADAPTERKIT_TEST_KEPT": "yes"} {
		if n, v := count(key); n != 1 || v != want {
			t.Errorf("%s: %d entries, value %q; want one, %q", key, n, v, want)
		}
	}
	if !slices.Contains(env, "PATH=/safe") {
		t.Errorf("env %q", env)
	}

	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte("OK=1\nnot a pair\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (&adapterOpts{envFiles: stringList{bad}}).environ(); err == nil || !strings.Contains(err.Error(), "bad:2 is not KEY=VALUE") {
		t.Errorf("malformed --env-file: %v", err)
	}
	if _, err := (&adapterOpts{envFiles: stringList{filepath.Join(t.TempDir(), "none")}}).environ(); err == nil {
		t.Error("missing --env-file accepted")
	}
}

// FuzzParseEnvFile: any file is KEY=VALUE entries with a non-empty KEY free of
// blanks and NUL-free lines, or a usage error; never a panic.
func FuzzParseEnvFile(f *testing.F) {
	for _, s := range []string{"A=1\n", "# c\n\nB=x=y\r\n", "bad\n", "=x\n", " A=1\n", "A B=1\n", "A=\x00\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		kvs, err := parseEnvFile("f", b)
		if err != nil {
			return
		}
		for _, kv := range kvs {
			k, _, ok := strings.Cut(kv, "=")
			if !ok || k == "" || strings.ContainsAny(k, " \t") || strings.ContainsRune(kv, 0) || strings.ContainsRune(kv, '\n') {
				t.Fatalf("parseEnvFile(%q) gave %q", b, kv)
			}
		}
	})
}
