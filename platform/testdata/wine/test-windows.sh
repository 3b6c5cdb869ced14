#!/usr/bin/env bash
# Runs adapterkit's Windows test binaries under Wine, for `make test-windows`.
#
#   platform/testdata/wine/test-windows.sh BUILD_DIR
#
# It cross-builds (GOOS=windows GOARCH=amd64, without -race) the test binaries of the
# packages in $pkgs and the programs the tests and checks start (adapterctl.exe and the
# example echo as echo_v1.2.0.exe), sets up a throwaway Wine prefix under
# BUILD_DIR/wine-prefix (once: `wineboot -i`; `make clean` removes it) with the
# ProcessPrng shim built from processprng.c beside this script, and runs:
#   - each test binary under wine64 with -test.v, from its package directory;
#   - host killed from Linux: a Windows host process (the platform test binary's "host"
#     helper, which starts an adapter with a grandchild and a detached grandchild) is
#     sent SIGKILL, and no process of its tree may be left;
#   - `adapterctl.exe check` on the Go echo .exe.
# It then lists every assertion a test skipped because Wine differs from Windows (the
# tests' "WINE GAP:" lines) and every skipped test with its reason, and ends the Wine
# prefix's wineserver (also on failure or interrupt): no Wine process is left behind.
#
# Where wine64 or the mingw-w64 compiler is missing, it says so on one SKIP: line (also
# appended to $ADAPTERKIT_SKIPLOG for the summary that ends `make test`, see sdk/make.sh)
# and succeeds; with ADAPTERKIT_REQUIRE_WINE set (CI) that is an error instead.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${1:-$root/build}
mkdir -p "$build"
build=$(cd "$build" && pwd)
out=$build/windows
prefix=$build/wine-prefix
logs=$out/logs
GO=${GO:-go}
# The packages whose tests run as Windows binaries, each as PKG or PKG:RUN (a -test.run
# pattern). Of controlplane only the daemon's documented absence applies: its other
# tests are about the Unix daemon, which Windows does not have.
pkgs="platform lifecycle registry discovery runtime plugin codec internal/jsoncodec controlplane:^TestNoDaemonOnWindows$"
how="apt-get install wine64 gcc-mingw-w64-x86-64 (Debian 12 has Wine 8), then make test-windows"

skip() {
	local line="the Windows tests under Wine (make test-windows) skipped: $1; to get them: $how"
	if [ -n "${ADAPTERKIT_REQUIRE_WINE:-}" ]; then
		echo "test-windows: ERROR: $line (ADAPTERKIT_REQUIRE_WINE makes this an error)" >&2
		exit 1
	fi
	echo "SKIP: $line"
	if [ -n "${ADAPTERKIT_SKIPLOG:-}" ]; then
		mkdir -p "$(dirname "$ADAPTERKIT_SKIPLOG")"
		echo "windows|the Windows tests under Wine|$1|$how" >>"$ADAPTERKIT_SKIPLOG"
	fi
	exit 0
}

# Debian's wine64 package installs the loader as /usr/lib/wine/wine64; the wine package
# adds wrappers on PATH.
wine=$(command -v wine64 || true)
[ -n "$wine" ] || { [ -x /usr/lib/wine/wine64 ] && wine=/usr/lib/wine/wine64; } || true
wineserver=$(command -v wineserver || true)
[ -n "$wineserver" ] || { [ -x /usr/lib/wine/wineserver ] && wineserver=/usr/lib/wine/wineserver; } || true
cc=$(command -v x86_64-w64-mingw32-gcc || true)
[ -n "$wine" ] && [ -n "$wineserver" ] || skip "wine64 is not installed"
[ -n "$cc" ] || skip "the mingw-w64 C compiler (x86_64-w64-mingw32-gcc) is not installed"

# Tests left out under Wine, each as PATTERN|REASON (printed with the skipped tests;
# declared after the checks above: bash 3, as on macOS, has no associative arrays).
declare -A leftout=(
	[runtime]='^TestOnPeerGoneOutputEnd$|hangs now and then under Wine 8: closing its os.Pipe (synchronous) waits for a ReadFile pending on it that CancelIoEx did not reach'
)

export WINEPREFIX=$prefix WINEDEBUG=-all
# No Mono or Gecko installer dialogs when the prefix is made: nothing here needs them.
export WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY WAYLAND_DISPLAY

# winpath PATH: the Windows name of a Unix path (Wine maps / to drive Z:).
winpath() { printf 'Z:%s' "${1//\//\\}"; }

cleanup() {
	# Ends every process of this prefix (tests, adapters, Wine's own services).
	"$wineserver" -k 2>/dev/null || true
	"$wineserver" -w 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start=$(date +%s)
mkdir -p "$out" "$logs"
rm -f "$logs"/*.log

echo "== building the Windows test binaries and programs (GOOS=windows GOARCH=amd64)"
for p in $pkgs; do
	p=${p%%:*}
	name=${p//\//-}
	(cd "$root" && GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $GO test -c -o "$out/$name.test.exe" "./$p")
done
mkdir -p "$out/adapters"
(cd "$root" && GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $GO build -o "$out/adapterctl.exe" ./cmd/adapterctl)
(cd "$root" && GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $GO build -o "$out/adapters/echo_v1.2.0.exe" ./examples/echo)
cp "$out/adapters/echo_v1.2.0.exe" "$out/adapters/echo_v2.0.0-beta.1.exe"
(cd "$root" && GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $GO build -o "$out/adapters/thermometer_v1.0.0.exe" ./examples/thermometer)
(cd "$root" && GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $GO build -o "$out/adapters/console_v1.0.0.exe" ./examples/console)
(cd "$root" && GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $GO build -o "$out/adapters/blobs_v1.0.0.exe" ./examples/blobs)
(cd "$root" && GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $GO build -o "$out/adapters/versioned.exe" ./e2e/cmd/versioned)
"$cc" -shared -o "$out/bcryptprimitives.dll" "$here/processprng.c" -ladvapi32
built=$(date +%s)

echo "== Wine prefix $prefix"
if [ ! -e "$prefix/.adapterkit-ready" ]; then
	rm -rf "$prefix"
	"$wine" wineboot -i >"$logs/wineboot.log" 2>&1 || { cat "$logs/wineboot.log"; exit 1; }
	"$wineserver" -w
	touch "$prefix/.adapterkit-ready"
fi
cp "$out/bcryptprimitives.dll" "$prefix/drive_c/windows/system32/bcryptprimitives.dll"
"$wine" --version 2>/dev/null || true
ready=$(date +%s)

# wine_internal LOG prints the top-level tests that failed in LOG, one per line, and
# succeeds when each of them failed with Wine's ERROR_INTERNAL_ERROR ("Internal
# error.", which Wine's CreateProcess returns now and then on a loaded machine) and
# nothing panicked: a Wine fault, worth one more run of those tests alone.
wine_internal() {
	awk '
		/^=== (RUN|CONT) / { name = $3; sub(/\/.*/, "", name) }
		name != "" { out[name] = out[name] $0 "\n" }
		/^--- FAIL: / { fails[$3] = 1 }
		/^panic:/ { bad = 1 }
		END {
			n = 0
			for (f in fails) { n++; print f; if (index(out[f], "Internal error.") == 0) bad = 1 }
			exit (n == 0 || bad)
		}' "$1"
}

failed=()
rerun=()
export ADAPTERKIT_TEST_PREBUILT
ADAPTERKIT_TEST_PREBUILT=$(winpath "$out/adapters")
for spec in $pkgs; do
	p=${spec%%:*}
	run=.
	[ "$p" = "$spec" ] || run=${spec#*:}
	name=${p//\//-}
	echo "== $p (wine64 $name.test.exe -test.v -test.run '$run')"
	rc=0
	flog=$logs/$name.log # the log whose failures are shown
	skipre=${leftout[$p]:-}
	skipre=${skipre%%|*}
	[ -z "$skipre" ] || echo "   left out: ${leftout[$p]#*|} ($skipre)"
	(cd "$root/$p" && timeout 300 "$wine" "$out/$name.test.exe" -test.v -test.count=1 -test.timeout=4m -test.run "$run" -test.skip "${skipre:-^$}") \
		>"$logs/$name.log" 2>&1 || rc=$?
	echo "   $(grep -c '^--- PASS' "$logs/$name.log" || true) passed, $(grep -c '^--- FAIL' "$logs/$name.log" || true) failed, $(grep -c '^--- SKIP' "$logs/$name.log" || true) skipped (top-level tests; log: $logs/$name.log)"
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && again=$(wine_internal "$logs/$name.log"); then
		again=$(echo $again | tr ' ' '|')
		echo "   $again failed with Wine's ERROR_INTERNAL_ERROR; run once more alone (log: $logs/$name.again.log)"
		rc=0
		(cd "$root/$p" && timeout 300 "$wine" "$out/$name.test.exe" -test.v -test.count=1 -test.timeout=4m -test.run "^($again)\$") \
			>"$logs/$name.again.log" 2>&1 || rc=$?
		[ $rc -ne 0 ] || rerun+=("$p: $again")
		flog=$logs/$name.again.log
	fi
	if [ $rc -ne 0 ]; then
		failed+=("$p")
		# Each failure with what its test logged.
		awk '/^=== RUN/ {buf=""} /^ +[^ =-]/ {buf=buf $0 "\n"} /--- FAIL/ {printf "%s%s\n", buf, $0; buf=""} /^panic:/ {p=1} p' \
			"$flog" | head -100
		[ $rc -ne 124 ] || echo "   timed out"
	fi
done

echo "== host killed from Linux: SIGKILL to the Wine process of a Windows host"
hostdir=$(mktemp -d "$out/hostkill.XXXXXX")
pidfile=$hostdir/pids
# The "host" helper starts a "tree" adapter (a grandchild sharing its stdout and a
# detached grandchild) in its job, prints "ready job", then waits.
(cd "$root/platform" && exec "$wine" "$out/platform.test.exe" adapterkit-platform-helper host "$(winpath "$pidfile")" 0) \
	>"$hostdir/out" 2>&1 &
host=$!
for _ in $(seq 600); do grep -q '^ready' "$hostdir/out" 2>/dev/null && break; sleep 0.1; done
# The Linux processes of the tree: Wine shows each Windows process's command line, which
# names the pid file.
tree() { pgrep -f -- "$(basename "$hostdir")" | grep -vx "$host" || true; }
if ! grep -q '^ready job' "$hostdir/out"; then
	echo "FAIL: the host did not start its adapter in a job: $(cat "$hostdir/out")"
	kill -KILL "$host" 2>/dev/null || true
	failed+=("host-sigkill")
else
	before=$(tree | wc -l)
	kill -KILL "$host"
	wait "$host" 2>/dev/null || true
	left=""
	for _ in $(seq 200); do
		left=$(tree)
		[ -z "$left" ] && break
		sleep 0.1
	done
	if [ "$before" -lt 3 ]; then
		echo "FAIL: saw $before Linux processes of the adapter tree before the kill, want 3 (adapter and two grandchildren)"
		failed+=("host-sigkill")
	elif [ -n "$left" ]; then
		echo "FAIL: SIGKILL of the host left its adapter tree running: $(echo $left)"
		failed+=("host-sigkill")
	else
		echo "PASS: $before processes of the adapter tree (adapter and two grandchildren) ended with the SIGKILLed host"
	fi
fi
rm -rf "$hostdir"

echo "== adapterctl.exe check on the Go echo .exe"
if (cd "$out" && timeout 300 "$wine" "$out/adapterctl.exe" check --dir "$(winpath "$out/adapters")" echo) >"$logs/check.log" 2>&1; then
	tail -3 "$logs/check.log"
	echo "PASS: adapterctl check echo"
else
	cat "$logs/check.log"
	echo "FAIL: adapterctl check echo"
	failed+=("adapterctl-check")
fi

echo "== assertions skipped because Wine differs from Windows (never skipped on Windows)"
gaps=$(grep -hoE '[A-Za-z0-9_]+_test\.go:[0-9]+: WINE GAP: .*' "$logs"/*.log | sort | uniq -c | sed 's/^ *//' || true)
echo "${gaps:-(none)}"
echo "== tests that failed with Wine's ERROR_INTERNAL_ERROR and passed when run again"
[ ${#rerun[@]} -eq 0 ] && echo "(none)" || printf '%s\n' "${rerun[@]}"
echo "== tests skipped, with their reasons"
for p in "${!leftout[@]}"; do echo "$p: ${leftout[$p]%%|*}: left out by test-windows.sh: ${leftout[$p]#*|}"; done
for spec in $pkgs; do
	p=${spec%%:*}
	name=${p//\//-}
	awk -v pkg="$p" '/^=== RUN/ {last=""} /^    [^ ].*_test\.go:[0-9]+: / {last=$0} /^ *--- SKIP/ {sub(/^ +/, "", last); print pkg ": " $3 ": " last}' "$logs/$name.log"
done
done_at=$(date +%s)
n=$(cat "$logs"/*.log | grep -cE '^--- (PASS|FAIL)' || true)
echo "test-windows: $n top-level tests ran as Windows binaries; build $((built - start)) s, prefix $((ready - built)) s, run $((done_at - ready)) s, $((done_at - start)) s in all"
if [ ${#failed[@]} -gt 0 ]; then
	echo "test-windows: FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "test-windows: ok"
