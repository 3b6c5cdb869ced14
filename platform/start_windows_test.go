package platform

import (
	"bufio"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// R62: the Windows-only part of the name rule (checkWin32Path), on top of the portable
// cases of TestWindowsExeName.
func TestWin32PathRules(t *testing.T) {
	cases := []struct {
		path string
		ok   bool
	}{
		{`C:\adapters\a.exe`, true},
		{`C:/adapters/a.exe`, true},
		{`\\server\share\dir\a.exe`, true},
		{`C:\adapters\PROGRA~1.EXE`, true},
		{`C:\adapters\console.exe`, true},
		{`C:\adapters\com10.exe`, true},
		{`C:\adapters\nul.exe`, false},
		{`C:\adapters\NUL .exe`, false},
		{`C:\adapters\con.x.exe`, false},
		{`C:\adapters\aux.exe`, false},
		{`C:\adapters\PRN.exe`, false},
		{`C:\adapters\com1.exe`, false},
		{`C:\adapters\LPT9.exe`, false},
		{`C:\adapters\COM0.exe`, false},
		{`C:\adapters\com².exe`, false},
		{`C:\adapters\conin$.exe`, false},
		{`C:\adapters\a*.exe`, false},
		{`C:\adapters\a?.exe`, false},
		{`C:\adapters\"a".exe`, false},
		{`C:\adapters\a<b.exe`, false},
		{`C:\adapters\a|b.exe`, false},
		{"C:\\adapters\\a\tb.exe", false},
		{"C:\\adapters\\a\x00.exe", false},
		{`//./C:/adapters/a.exe`, false},
		{`//./pipe/a.exe`, false},
		{`\\.\pipe\a.exe`, false},
		{`//?/C:/adapters/a.exe`, false},
		{`\??\C:\adapters\a.exe`, false},
		{`\\?\UNC\server\share\a.exe`, false},
	}
	for _, tc := range cases {
		err := checkExeName(tc.path)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, errNotExe)) {
			t.Errorf("checkExeName(%q) = %v, want ok=%v", tc.path, err, tc.ok)
		}
	}
}

// R61: arguments reach the adapter verbatim, whatever they hold.
func TestCommandLineRoundTrip(t *testing.T) {
	args := []string{"", "plain", "two words", `quote"inside`, `trailing\`, `trailing space\ `,
		`\\server\share\`, `a\\"b`, "tab\there", `"`, `\"`, "é😀", "%PATH%", "^&|<>"}
	path := `C:\Program Files\adapters\a.exe`
	l, err := newLaunch(&Config{Path: path, Args: args}, `C:\work dir`)
	if err != nil {
		t.Fatal(err)
	}
	cmdline := windows.UTF16ToString(l.cmdline)
	got, err := windows.DecomposeCommandLine(cmdline)
	if err != nil {
		t.Fatal(err)
	}
	if want := append([]string{path}, args...); !slices.Equal(got, want) {
		t.Errorf("command line %s decomposes to %q, want %q", cmdline, got, want)
	}
	if windows.UTF16ToString(l.app) != path || windows.UTF16ToString(l.dir) != `C:\work dir` {
		t.Errorf("application %q, directory %q", windows.UTF16ToString(l.app), windows.UTF16ToString(l.dir))
	}
	for _, cfg := range []Config{{Path: path, Args: []string{"a\x00b"}}, {Path: path, Env: []string{""}}} {
		if _, err := newLaunch(&cfg, `C:\`); err == nil {
			t.Errorf("newLaunch(%+v) accepted", cfg)
		}
	}
	if _, err := newLaunch(&Config{Path: path}, "C:\\\x00"); err == nil {
		t.Error("a working directory with NUL was accepted")
	}
}

// The hand-declared structures and the x/sys one used have the sizes winnt.h gives
// (also checked at compile time in job_windows.go, for every GOARCH).
func TestJobStructSizes(t *testing.T) {
	ptr := unsafe.Sizeof(uintptr(0))
	ext, basic := uintptr(112), uintptr(48)
	if ptr == 8 {
		ext, basic = 144, 64
	}
	cases := []struct {
		name      string
		got, want uintptr
	}{
		{"JOBOBJECT_BASIC_ACCOUNTING_INFORMATION", unsafe.Sizeof(jobBasicAccounting{}), 48},
		{"ActiveProcesses offset", unsafe.Offsetof(jobBasicAccounting{}.ActiveProcesses), 40},
		{"JOBOBJECT_BASIC_PROCESS_ID_LIST(64)", unsafe.Sizeof(jobProcessIDList{}), 8 + 64*ptr},
		{"JOBOBJECT_BASIC_LIMIT_INFORMATION", unsafe.Sizeof(windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{}), basic},
		{"JOBOBJECT_EXTENDED_LIMIT_INFORMATION", unsafe.Sizeof(windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}), ext},
		{"JobMemoryLimit offset", unsafe.Offsetof(windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}.JobMemoryLimit), basic + 48 + ptr},
		{"STARTUPINFOEXW", unsafe.Sizeof(windows.StartupInfoEx{}), map[uintptr]uintptr{4: 72, 8: 112}[ptr]},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: %d bytes, want %d", tc.name, tc.got, tc.want)
		}
	}
}

func TestJobLimits(t *testing.T) {
	const forbidden = windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK | windows.JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK
	info, na := jobLimits(Resources{})
	if f := info.BasicLimitInformation.LimitFlags; f != windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE || na != nil {
		t.Errorf("no resources: flags %#x, not applied %v", f, na)
	}
	info, na = jobLimits(Resources{MemoryBytes: 64 << 20, MaxProcesses: 3})
	f := info.BasicLimitInformation.LimitFlags
	if f&windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE == 0 || f&forbidden != 0 || na != nil ||
		f&windows.JOB_OBJECT_LIMIT_JOB_MEMORY == 0 || info.JobMemoryLimit != 64<<20 ||
		f&windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS == 0 || info.BasicLimitInformation.ActiveProcessLimit != 3 {
		t.Errorf("limits: %+v, not applied %v", info, na)
	}
	info, na = jobLimits(Resources{MemoryBytes: math.MaxInt64, MaxProcesses: math.MaxInt})
	if info.BasicLimitInformation.ActiveProcessLimit != uint32(min(uint64(math.MaxInt), math.MaxUint32)) {
		t.Errorf("process limit %d", info.BasicLimitInformation.ActiveProcessLimit)
	}
	if unsafe.Sizeof(uintptr(0)) == 4 {
		if na == nil || !errors.Is(na, ErrLimitUnsupported) || info.BasicLimitInformation.LimitFlags&windows.JOB_OBJECT_LIMIT_JOB_MEMORY != 0 {
			t.Errorf("a memory limit over 4 GiB on 32-bit: %+v, not applied %v", info, na)
		}
	} else if na != nil || uint64(info.JobMemoryLimit) != math.MaxInt64 {
		t.Errorf("a large memory limit on 64-bit: %d, not applied %v", info.JobMemoryLimit, na)
	}
}

// An empty environment entry is refused before a job exists.
func TestEnvEntryRefused(t *testing.T) {
	_, err := Start(context.Background(), Config{Path: mustExecutable(), Env: []string{"A=1", ""}})
	if !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Start with an empty environment entry: %v, want ErrInvalidConfig", err)
	}
}

// R62, R63, R64: the adapter is in its own job with kill-on-close and no breakaway; Kill
// ends a tree with a detached grandchild, Verify proves it, and each recorded process is
// gone.
func TestJobKillsWholeTree(t *testing.T) {
	pidfile := filepath.Join(testkit.TempDir(t), "pids")
	tree, err := Start(context.Background(), Config{
		Path: mustExecutable(), Args: []string{helperArg, "tree", pidfile},
		Env:       []string{"SystemRoot=" + os.Getenv("SystemRoot")},
		Resources: Resources{MemoryBytes: 2 << 30, MaxProcesses: 16},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	if !tree.Supervision().Mechanism.Has(MechJobObject) || tree.LimitErr() != nil {
		t.Fatalf("mechanism %v, limit error %v", tree.Supervision().Mechanism, tree.LimitErr())
	}
	if line, err := bufio.NewReader(tree.Stdout()).ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("adapter said %q, %v", line, err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	var inJob []int
	if err := tree.sys.withJob(func(job windows.Handle) error {
		inJob = querySurvivors(job)
		return windows.QueryInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
			uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	}); err != nil {
		t.Fatal(err)
	}
	flags := info.BasicLimitInformation.LimitFlags
	switch {
	case flags == 0 && testkit.WineGap(t, "the job's limits read back (kill-on-close, no breakaway, memory, processes)",
		"QueryInformationJobObject(JobObjectExtendedLimitInformation) returns zeros"):
	case flags&windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE == 0 || flags&(windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK|windows.JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK) != 0 ||
		info.JobMemoryLimit != 2<<30 || info.BasicLimitInformation.ActiveProcessLimit != 16:
		t.Errorf("job limits %#x, memory %d, processes %d", flags, info.JobMemoryLimit, info.BasicLimitInformation.ActiveProcessLimit)
	}
	roles, err := readPidFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"adapter", "sleeper", "daemon"} {
		if !slices.Contains(inJob, roles[role]) {
			t.Errorf("%s (pid %d) is not in the job %v", role, roles[role], inJob)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tree.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tree.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	for role, pid := range roles {
		if running(pid) {
			t.Errorf("%s (pid %d) still runs after Verify", role, pid)
		}
	}
}

// running reports whether pid names a process that has not terminated: its handle is
// not yet signaled.
func running(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false // no such process (or a reused pid we may not open)
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}

var procGetHandleInformation = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetHandleInformation")

func inheritable(t *testing.T, f *os.File) bool {
	t.Helper()
	var flags uint32
	if r, _, e := procGetHandleInformation.Call(f.Fd(), uintptr(unsafe.Pointer(&flags))); r == 0 {
		t.Fatalf("GetHandleInformation: %v", e)
	}
	return flags&windows.HANDLE_FLAG_INHERIT != 0
}

// R49: the adapter's pipe ends are never inheritable in the host, from the moment they
// exist, so C code calling CreateProcess with bInheritHandles cannot take the host's end
// of an adapter's stdin.
func TestStdioPipesNotInheritable(t *testing.T) {
	for _, hostReads := range []bool{true, false} {
		r, w, err := stdioPipe(hostReads)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []*os.File{r, w} {
			if inheritable(t, f) {
				t.Errorf("%s is inheritable", f.Name())
			}
		}
		r.Close()
		w.Close()
	}
	var buf strings.Builder
	tree := startHelper(t, Config{Stderr: &lockedWriter{w: &buf}}, "block")
	for _, f := range []*os.File{tree.stdin, tree.stdout, tree.stderrR} {
		if inheritable(t, f) {
			t.Errorf("the host's end %s of a running adapter is inheritable", f.Name())
		}
	}
}

// lockedWriter is a writer for Config.Stderr that is not an *os.File, so that a stderr
// pipe is made.
type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
