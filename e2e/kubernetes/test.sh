#!/usr/bin/env bash
# make test-kubernetes: contrib/kubernetes' manifests, run by `podman kube play`.
#
# Checks the manifests against the Kubernetes API types (e2e/kubernetes/manifests),
# builds the image (make image), makes a throwaway CA with `adapterctl certs`, plays
# the ConfigMap, Service and Deployment (with the TLS Secret as a podman secret, and
# the control and metrics ports published on 127.0.0.1 ports of its choosing), waits
# for /readyz, then from outside the pod: calls adapters through the mutual-TLS port
# with `adapterctl --remote`, checks that a read-only identity and an identity no
# --allow names are refused, scrapes /metrics; inside the pod: records what
# containment the daemon got (`adapterctl status` on its socket); then SIGKILLs the
# daemon's process and checks that none of its adapters survives, waits for the
# restarted daemon, stops it with SIGTERM and checks the drain (exit 0, every process
# tree verified gone, within terminationGracePeriodSeconds). Everything it created is
# removed at the end, also on failure.
#
# Needs podman (Debian: apt-get install podman). Where podman is missing it prints
# SKIP and exits 0, unless ADAPTERKIT_REQUIRE_PODMAN is set. Machine quirks (another
# OCI runtime, ulimits that cannot be set) belong in containers.conf, or in a file
# named by $CONTAINERS_CONF; see docs/kubernetes.md.
set -euo pipefail

cd "$(dirname "$0")/../.."
GO=${GO:-go}
PODMAN=${PODMAN:-podman}
IMAGE=${IMAGE:-localhost/adapterkit/adapterd}
BUILD=${BUILD:-$PWD/build}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}
# Generous bounds for a loaded 2-core machine; every wait polls and ends early.
READY_WAIT=${ADAPTERKIT_KUBE_READY_WAIT:-180}
GONE_WAIT=30
GRACE=$(sed -n 's/^ *terminationGracePeriodSeconds: *\([0-9]*\).*/\1/p' contrib/kubernetes/deployment.yaml)

# The manifests against the Kubernetes API types first (a module of its own, so the
# Kubernetes modules stay out of the library's go.mod); this needs Go only.
echo "== manifests: strict decoding into k8s.io/api types, references between them"
(cd e2e/kubernetes/manifests && "$GO" test -count=1 ./...)

if ! command -v "${PODMAN%% *}" >/dev/null; then
  msg="SKIP: make test-kubernetes needs podman (Debian: apt-get install podman runc); see docs/kubernetes.md"
  if [ -n "${ADAPTERKIT_REQUIRE_PODMAN:-}" ]; then
    echo "${msg#SKIP: } (ADAPTERKIT_REQUIRE_PODMAN is set)" >&2
    exit 1
  fi
  echo "$msg"
  exit 0
fi

log() { printf '== %s\n' "$*"; }
die() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}

work=""
pod_started=""
ctr=adapterd-pod-0-adapterd # podman's name for the Deployment's first pod's container
volumes="adapterd-tls adapterd-policy adapterd-run adapterd-state adapterd-tmp"
derived="$IMAGE-test-derived:$VERSION"

teardown() {
  local rc=$?
  set +e
  if [ "$rc" -ne 0 ] && [ -n "$pod_started" ]; then
    echo "--- the daemon's log (last 40 lines)" >&2
    $PODMAN logs --tail 40 "$ctr" >&2 2>&1
  fi
  if [ -n "$work" ] && [ -f "$work/play.yaml" ]; then
    $PODMAN kube down "$work/play.yaml" >/dev/null 2>&1
  fi
  $PODMAN pod rm -f adapterd-pod-0 >/dev/null 2>&1
  $PODMAN secret rm adapterd-tls >/dev/null 2>&1
  # shellcheck disable=SC2086
  $PODMAN volume rm -f $volumes >/dev/null 2>&1
  $PODMAN rmi -f "$derived" >/dev/null 2>&1
  [ -n "$work" ] && rm -rf "$work"
  if [ "$rc" -eq 0 ]; then echo "test-kubernetes: 1 passed, 0 failed"; else echo "test-kubernetes: 0 passed, 1 failed"; fi
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT TERM

# What a previous run killed midway may have left under the same names.
$PODMAN pod rm -f adapterd-pod-0 >/dev/null 2>&1 || true
$PODMAN secret rm adapterd-tls >/dev/null 2>&1 || true
# shellcheck disable=SC2086
$PODMAN volume rm -f $volumes >/dev/null 2>&1 || true

mkdir -p "$BUILD"
work=$(mktemp -d "$BUILD/kube-test.XXXXXX")

log "make image ($IMAGE:$VERSION)"
make --no-print-directory image GO="$GO" PODMAN="$PODMAN" IMAGE="$IMAGE" VERSION="$VERSION" BUILD="$BUILD" >"$work/image.log" 2>&1 ||
  { tail -20 "$work/image.log" >&2; die "make image failed"; }
CGO_ENABLED=0 $GO build -o "$work/adapterctl" ./cmd/adapterctl
actl="$work/adapterctl"

# A user's own adapter added the way docs/kubernetes.md shows: an image derived from
# the daemon's, which the pod below runs. The adapter is the static echo under another
# name, so a call to "mine" reaches a file that only the derived image holds.
log "derived image with an adapter of the user's own ($derived)"
mkdir "$work/derived"
cp "$BUILD/image/rootfs/usr/local/lib/adapterkit/adapters/echo_v1.2.0" "$work/derived/mine_v1.0.0"
printf 'FROM %s\nCOPY --chown=0:0 --chmod=0755 mine_v1.0.0 /usr/local/lib/adapterkit/adapters/\n' \
  "$IMAGE:$VERSION" >"$work/derived/Containerfile"
$PODMAN build -q -f "$work/derived/Containerfile" -t "$derived" "$work/derived" >"$work/derived.log" 2>&1 ||
  { cat "$work/derived.log" >&2; die "building the derived image failed"; }

# An HTTP GET on 127.0.0.1 without curl: prints the status code, then the body.
http_get() { # PORT PATH
  local port=$1 path=$2 resp
  resp=$(timeout 15 bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$port"' || exit 1
    printf "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" "'"$path"'" >&3; cat <&3' 2>/dev/null) || return 1
  printf '%s\n' "$resp" | sed -n '1s/^HTTP\/[0-9.]* \([0-9]*\).*/\1/p'
  printf '%s\n' "$resp" | sed '1,/^\r\{0,1\}$/d'
}

# Two free ports on 127.0.0.1 for the published control and metrics ports: a port
# is taken when something accepts a connection on it (or podman fails to bind it,
# which the play reports).
free_port() {
  local p
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 40000))
    if ! timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$p" 2>/dev/null; then
      echo "$p"
      return
    fi
  done
  die "no free port found"
}
cport=$(free_port)
mport=$(free_port)
[ "$cport" != "$mport" ] || mport=$(free_port)

log "throwaway CA: server certificate for 127.0.0.1, clients ops (call), monitor (read), intruder (no --allow)"
"$actl" certs --dir "$work/certs" --host 127.0.0.1 --host localhost --host adapterd \
  --client ops --client monitor --client intruder --valid 2h >/dev/null

# The Secret adapterd-tls. podman 4.3's kube play reads a secret volume from a podman
# secret holding a Secret document, and writes each entry of its data as given,
# without base64-decoding it: the PEM text goes there as is (a cluster takes
# `kubectl create secret generic adapterd-tls --from-file=...`).
{
  printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: adapterd-tls\ntype: Opaque\ndata:\n'
  for f in server.pem server.key ca.pem; do
    printf '  %s: |\n' "$f"
    sed 's/^/    /' "$work/certs/$f"
  done
} >"$work/secret.yaml"
$PODMAN secret create adapterd-tls "$work/secret.yaml" >/dev/null

# The manifests as they are, but for the derived image just built and the ports
# published on loopback (a cluster reaches them through the Service and the pod's IP).
awk -v img="$derived" -v cport="$cport" -v mport="$mport" '
  /^ *image: / { sub(/image: .*/, "image: " img) }
  { print }
  /containerPort: 8443/ || /containerPort: 9464/ {
    match($0, /^ */); pad = substr($0, 1, RLENGTH)
    print pad "hostIP: 127.0.0.1"
    print pad "hostPort: " ($0 ~ /8443/ ? cport : mport)
  }' contrib/kubernetes/deployment.yaml >"$work/deployment.yaml"
grep -q "hostPort: $cport" "$work/deployment.yaml" && grep -q "hostPort: $mport" "$work/deployment.yaml" ||
  die "could not publish the ports in the Deployment"
{
  cat contrib/kubernetes/configmap.yaml
  echo ---
  cat contrib/kubernetes/service.yaml
  echo ---
  cat "$work/deployment.yaml"
} >"$work/play.yaml"

log "podman kube play (control plane on 127.0.0.1:$cport, metrics on 127.0.0.1:$mport)"
pod_started=1
$PODMAN kube play "$work/play.yaml" >"$work/play.log" 2>&1 || { cat "$work/play.log" >&2; die "podman kube play failed"; }

# wait_ready: polls /readyz until it answers 200, at most READY_WAIT seconds.
wait_ready() {
  local deadline=$((SECONDS + READY_WAIT)) out=""
  while [ $SECONDS -lt $deadline ]; do
    out=$(http_get "$mport" /readyz || true)
    if [ "$(head -1 <<<"$out")" = 200 ]; then
      echo "   readyz: $(sed -n 2p <<<"$out") (after ${1:-}$((SECONDS - start))s)"
      return 0
    fi
    sleep 1
  done
  die "/readyz not 200 within ${READY_WAIT}s; last answer: ${out:-none}"
}
start=$SECONDS
wait_ready
out=$(http_get "$mport" /healthz || true)
[ "$(head -1 <<<"$out")" = 200 ] || die "/healthz answered: ${out:-nothing}"

remote() { # IDENTITY ARGS...
  local who=$1
  shift
  "$actl" "$1" --remote "127.0.0.1:$cport" --tls-ca "$work/certs/ca.pem" \
    --tls-cert "$work/certs/client-$who.pem" --tls-key "$work/certs/client-$who.key" "${@:2}"
}

log "calls from outside the pod through the published mutual-TLS port"
out=$(remote ops call thermometer example.device.read '{"probe":"inlet"}')
[ "$out" = '{"celsius":21.5}' ] || die "thermometer answered $out"
echo "   thermometer: $out"
out=$(remote ops call echo example.echo.echo '{"from":"outside"}')
[ "$out" = '{"from":"outside"}' ] || die "echo answered $out"
echo "   echo: $out"
out=$(remote ops call mine example.echo.echo '{"from":"the derived image"}')
[ "$out" = '{"from":"the derived image"}' ] || die "mine (the derived image's adapter) answered $out"
echo "   mine (the derived image's own adapter): $out"
set +e
remote monitor call echo example.echo.echo '{}' >"$work/denied.out" 2>&1
rc=$?
set -e
[ "$rc" = 3 ] && grep -q permission_denied "$work/denied.out" || die "monitor (read) calling: exit $rc, $(cat "$work/denied.out")"
echo "   monitor (role read) calling: refused, permission_denied"
set +e
remote intruder ping >"$work/intruder.out" 2>&1
rc=$?
set -e
[ "$rc" = 3 ] || die "intruder (no --allow): exit $rc, $(cat "$work/intruder.out")"
echo "   intruder (no --allow): refused during the handshake"
remote monitor status >/dev/null || die "monitor (read) status refused"

log "metrics"
metrics=$(http_get "$mport" /metrics)
[ "$(head -1 <<<"$metrics")" = 200 ] || die "/metrics: $(head -1 <<<"$metrics")"
grep -Eq '^adapterkit_calls_total\{.*adapter="thermometer".*code="ok".*\} 1$' <<<"$metrics" ||
  die "no thermometer call counted: $(grep adapterkit_calls_total <<<"$metrics")"
grep -Eq '^adapterkit_adapter_up\{.*adapter="echo".*\} 1$' <<<"$metrics" || die "echo not up in the metrics"
grep -Eq "^adapterkit_build_info\{.*version=\"$VERSION\".*\} 1$" <<<"$metrics" ||
  die "build info without version $VERSION: $(grep adapterkit_build_info <<<"$metrics")"
echo "   $(grep -Ec '^adapterkit_' <<<"$metrics") adapterkit series; calls, adapter_up and build_info $VERSION as expected"

log "inside the pod: what containment the daemon got (adapterctl status on its socket)"
$PODMAN exec "$ctr" adapterctl status --socket /run/adapterkit/adapterkit.sock >"$work/status.txt"
grep -E '^  (echo|thermometer) ' "$work/status.txt" | grep -E 'running' | awk '{print "   " $1 ": " $(NF-1)}'
grep -E '^  (echo|thermometer): (sandbox|.* dropped)' "$work/status.txt" | sed 's/^/  /' || true
grep -q '^unverified  0' "$work/status.txt" || die "unverified cleanups in the pod: $(grep unverified "$work/status.txt")"

log "SIGKILL of the daemon's process: no adapter may survive it"
daemon=$($PODMAN inspect --format '{{.State.Pid}}' "$ctr")
[ -n "$daemon" ] && [ "$daemon" != 0 ] || die "no daemon process"
descendants() {
  local c
  for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    echo "$c"
    descendants "$c"
  done
}
adapters=()
for p in $(descendants "$daemon"); do
  exe=$(readlink "/proc/$p/exe" 2>/dev/null || true)
  case $exe in /usr/local/lib/adapterkit/adapters/*) adapters+=("$p:$exe") ;; esac
done
[ "${#adapters[@]}" -ge 2 ] || die "expected the two adapters under the daemon (pid $daemon), found: ${adapters[*]:-none}"
echo "   daemon pid $daemon (host), adapters: ${adapters[*]}"
kill -KILL "$daemon"
deadline=$((SECONDS + GONE_WAIT))
while :; do
  left=()
  for a in "${adapters[@]}"; do
    p=${a%%:*}
    # Alive and still that adapter (not a pid reused since).
    [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "${a#*:}" ] && left+=("$a")
  done
  [ "${#left[@]}" = 0 ] && break
  [ $SECONDS -lt $deadline ] || die "adapters alive ${GONE_WAIT}s after the daemon was killed: ${left[*]}"
  sleep 0.2
done
echo "   every adapter gone"

log "the daemon restarted (restartPolicy Always); SIGTERM drains it"
start=$SECONDS
wait_ready "restart, "
out=$(remote ops call echo example.echo.echo '{"again":true}')
[ "$out" = '{"again":true}' ] || die "echo after the restart answered $out"
t0=$SECONDS
$PODMAN stop --time "$GRACE" "$ctr" >/dev/null 2>>"$work/stop.log"
took=$((SECONDS - t0))
rc=$($PODMAN inspect --format '{{.State.ExitCode}}' "$ctr")
$PODMAN logs "$ctr" >"$work/daemon.log" 2>&1
last=$(grep 'adapterctl serve: stopped' "$work/daemon.log" | tail -1)
[ "$rc" = 0 ] || die "daemon exit status $rc after SIGTERM (${took}s); $last"
[ "$last" = "adapterctl serve: stopped; every adapter closed, process trees verified gone" ] || die "drain: $last"
[ "$took" -lt "$GRACE" ] || die "drain took ${took}s, terminationGracePeriodSeconds is $GRACE"
echo "   exit 0 after ${took}s (grace ${GRACE}s): $last"
