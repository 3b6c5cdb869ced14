package platform

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// flipLink is the attacker of the "#!" race, a contained adapter: it replaces link by a
// symbolic link to a, then to b, then to a..., each atomically (a new link renamed over
// it), until its standard input ends, and reports how many times.
func flipLink(link, a, b string) int {
	var done atomic.Bool
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		done.Store(true)
	}()
	fmt.Println("ready")
	tmp := link + ".new"
	flips := 0
	for deadline := time.Now().Add(3 * time.Minute); !done.Load() && time.Now().Before(deadline); flips++ {
		target := a
		if flips%2 == 1 {
			target = b
		}
		if err := os.Symlink(target, tmp); err != nil {
			fmt.Println("flip error", err)
			return 1
		}
		if err := os.Rename(tmp, link); err != nil {
			fmt.Println("flip error", err)
			return 1
		}
	}
	fmt.Println("flips", flips)
	return 0
}

// raceReport is what the host saw of the victim's starts.
type raceReport struct {
	Starts, Refused, Ran int
	Flips                string   // the attacker's last line
	Read                 []string // what a victim that read the secret said (must stay empty)
	Refusals             []string // the first few refusals, for the log
}

// shebangRace plays the attack on the "#!" interpreter of a victim adapter. work holds
// attack/, a directory a contained attacker adapter (exe in the "flip" mode) may write,
// with the symbolic link "interp" it flips between /bin/sh and "/", and victim/victim, a
// script "#!<work>/attack/interp" that tries to read secret (outside every grant) with
// the shell's own read. The host starts the victim contained, again and again, up to
// maxStarts times or until budget has passed (or the victim read the secret).
func shebangRace(ctx context.Context, exe, work, secret string, maxStarts int, budget time.Duration) (raceReport, error) {
	var rep raceReport
	attackDir, victimDir := filepath.Join(work, "attack"), filepath.Join(work, "victim")
	for _, d := range []string{attackDir, victimDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return rep, err
		}
		if err := os.Chmod(d, 0o755); err != nil {
			return rep, err
		}
	}
	link := filepath.Join(attackDir, "interp")
	if err := os.Symlink("/bin/sh", link); err != nil {
		return rep, err
	}
	victim := filepath.Join(victimDir, "victim")
	script := fmt.Sprintf("#!%s\nif read -r x 2>/dev/null <%s; then echo \"READ $x\"; else echo denied; fi\n", link, secret)
	if err := os.WriteFile(victim, []byte(script), 0o755); err != nil {
		return rep, err
	}
	attacker, err := Start(ctx, Config{Path: exe, Args: []string{launchTestArg, "flip", link, "/bin/sh", "/"},
		Env: []string{"GORACE=atexit_sleep_ms=0"}, Sandbox: &Sandbox{Write: []string{attackDir}}})
	if err != nil {
		return rep, fmt.Errorf("starting the attacker: %w", err)
	}
	stopAttacker := func() {
		_ = attacker.Kill(ctx)
		_ = attacker.Verify(ctx)
		_ = attacker.Close()
	}
	defer stopAttacker()
	out := bufio.NewReader(attacker.Stdout())
	if line, err := out.ReadString('\n'); line != "ready\n" {
		return rep, fmt.Errorf("the attacker said %q (%v)", line, err)
	}
	for deadline := time.Now().Add(budget); rep.Starts < maxStarts && time.Now().Before(deadline) && len(rep.Read) == 0; rep.Starts++ {
		said, err := runVictim(ctx, victim)
		switch {
		case err != nil:
			rep.Refused++
			if len(rep.Refusals) < 3 {
				rep.Refusals = append(rep.Refusals, err.Error())
			}
		case strings.HasPrefix(said, "READ"):
			rep.Read = append(rep.Read, said)
		case said == "denied":
			rep.Ran++
		default: // the exec found the link on "/" (refused by the kernel) or the start failed late
			rep.Refused++
		}
	}
	attacker.Stdin().Close()
	rest, _ := io.ReadAll(out)
	rep.Flips = strings.TrimSpace(string(rest))
	return rep, nil
}

// runVictim starts the victim contained and returns what it said.
func runVictim(ctx context.Context, victim string) (string, error) {
	tree, err := Start(ctx, Config{Path: victim, Sandbox: &Sandbox{}})
	if err != nil {
		return "", err
	}
	defer func() {
		_ = tree.Kill(ctx)
		_ = tree.Verify(ctx)
		_ = tree.Close()
	}()
	tree.Stdin().Close()
	b, _ := io.ReadAll(tree.Stdout())
	return strings.TrimSpace(string(b)), nil
}

// runShebangRace is the "shebangrace" helper mode (a host as nobody): args are the
// work directory, the secret, the number of starts and the budget; it prints the
// report as JSON.
func runShebangRace(args []string) int {
	n, _ := strconv.Atoi(args[2])
	budget, _ := time.ParseDuration(args[3])
	exe, _ := os.Executable()
	ctx, cancel := context.WithTimeout(context.Background(), budget+time.Minute)
	defer cancel()
	rep, err := shebangRace(ctx, exe, args[0], args[1], n, budget)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 4
	}
	b, _ := json.Marshal(rep)
	fmt.Println(string(b))
	return 0
}

// A contained adapter that may write the directory holding another adapter's "#!"
// interpreter link flips it between /bin/sh and "/" while the host starts that victim
// again and again: grants are resolved once, and a link is followed only where root
// alone could have changed it, to a regular system program, opened without following
// links and checked on its descriptor. So every start is refused, or runs with no
// access to a secret outside its grants — it never gets "/" granted (with the
// interpreter re-opened by name after its check, it did within tens of starts).
//
// As root, the link lives in directories of root (writable by the attacker: an
// adapter of a root host is uid 0 without capabilities) so that some starts are
// accepted and run; as nobody, in nobody's directory, where every start is refused.
func TestSandboxShebangLinkRace(t *testing.T) {
	const starts, budget = 300, 60 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 2*budget+time.Minute)
	defer cancel()
	t.Run("root", func(t *testing.T) {
		requireRoot(t)
		// A directory no one but root may change, so that the victim's "#!" link is
		// followed: /run is root's tmpfs on most systems.
		var st unix.Stat_t
		base := "/run"
		if unix.Stat(base, &st) != nil || rootOnlyDirs(base) != nil {
			t.Skipf("%s is not a directory of root only here", base)
		}
		work, err := os.MkdirTemp(base, "adapterkit-race-")
		if err != nil {
			t.Skip(err)
		}
		defer os.RemoveAll(work)
		if err := os.Chmod(work, 0o755); err != nil {
			t.Fatal(err)
		}
		secret := filepath.Join(canonical(t, t.TempDir()), "secret")
		if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		rep, err := shebangRace(ctx, mustExecutable(), work, secret, starts, budget)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", rep)
		if len(rep.Read) > 0 {
			t.Fatalf("start %d of the victim read the secret: %q", rep.Starts, rep.Read)
		}
		if rep.Ran == 0 || !strings.HasPrefix(rep.Flips, "flips ") || rep.Flips == "flips 0" {
			t.Errorf("%+v: want some starts run while the attacker flipped", rep)
		}
	})
	t.Run("nobody", func(t *testing.T) {
		requireRoot(t)
		dir, exe := othersCopy(t)
		work := workOf(t, dir, nobodyUID, 0o700)
		secret := filepath.Join(dir, "secret")
		if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil || os.Chown(secret, nobodyUID, nobodyUID) != nil {
			t.Fatal("writing the secret")
		}
		cmd := exec.CommandContext(ctx, exe, launchTestArg, "shebangrace", work, secret, strconv.Itoa(starts), budget.String())
		cmd.Env = []string{"GORACE=atexit_sleep_ms=0", "TMPDIR=" + work}
		cmd.Dir = work
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID}}
		rep := nobodyReport[raceReport](t, cmd)
		t.Logf("%+v", rep)
		if len(rep.Read) > 0 {
			t.Fatalf("start %d of the victim read the secret: %q", rep.Starts, rep.Read)
		}
		if rep.Starts == 0 || !strings.HasPrefix(rep.Flips, "flips ") {
			t.Errorf("%+v: the race did not run", rep)
		}
	})
}
