#!/usr/bin/env bash
# Builds and tests the language SDKs (sdk/) for the Makefile, on whatever the machine has.
#
#   sdk/make.sh build LANG ADAPTERS   build LANG's echo adapter into the directory ADAPTERS
#   sdk/make.sh test LANG             run LANG's own test suite
#   sdk/make.sh summary               one line: what this make run skipped, and why
#
# LANG is python, typescript or rust. A language whose toolchain or dependencies are
# missing is skipped, with one line that names what was skipped, why, and how to get it;
# the line is also appended to $ADAPTERKIT_SKIPLOG, which `summary` reads at the end of the
# run. A skip of a language named in $ADAPTERKIT_REQUIRE_SDKS (comma-separated; CI sets
# all three) is an error instead. A failing build or test is always an error.
#
# The Rust SDK builds like any crate, from crates.io (or whatever the user's cargo
# configuration says). Only when cargo cannot fetch the crates, and Debian's packaged
# crates (librust-*-dev, in /usr/share/cargo/registry) are installed, does the build take
# them instead, offline, through --config flags given to this build alone.
# ADAPTERKIT_RUST_CRATES=debian asks for the packaged crates without trying crates.io,
# ADAPTERKIT_RUST_CRATES=cargo for cargo's own configuration without the fallback.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
skiplog=${ADAPTERKIT_SKIPLOG:-}
debian_crates=${ADAPTERKIT_DEBIAN_CRATES:-/usr/share/cargo/registry}
# The Debian packages that hold the Rust SDK's dependencies.
debian_pkgs="librust-tokio-dev librust-serde-json-dev librust-serde-derive-dev librust-serde-dev librust-libc-dev librust-log-dev"

# required LANG: whether a skip of LANG is an error.
required() {
	case ",${ADAPTERKIT_REQUIRE_SDKS:-}," in
	*",$1,"* | *",all,"*) return 0 ;;
	esac
	return 1
}

# skip LANG WHAT WHY HOW: report a skip (or fail, when LANG is required).
skip() {
	local line="$2 skipped: $3; to get it: $4"
	if required "$1"; then
		echo "sdk/make.sh: ERROR: $line (ADAPTERKIT_REQUIRE_SDKS=$ADAPTERKIT_REQUIRE_SDKS makes this an error)" >&2
		exit 1
	fi
	echo "SKIP: $line"
	if [ -n "$skiplog" ]; then
		mkdir -p "$(dirname "$skiplog")"
		echo "$1|$2|$3" >>"$skiplog"
	fi
}

# python_why: why the Python SDK cannot run here, or nothing.
python_why() {
	if ! command -v python3 >/dev/null; then
		echo "python3 is not installed"
	elif ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))'; then
		echo "python3 is older than 3.9 ($(python3 -V 2>&1))"
	fi
}
python_how="install python3 (>= 3.9)"

# typescript_why: why the TypeScript SDK cannot be built here, or nothing. It installs
# the SDK's compiler from the committed lockfile when that has not been done yet.
typescript_why() {
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		echo "node and npm are not installed"
		return
	fi
	if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
		echo "node is older than 20 ($(node --version))"
		return
	fi
	local ts="$root/sdk/typescript"
	if [ ! -e "$ts/node_modules/.installed" ] || [ "$ts/package-lock.json" -nt "$ts/node_modules/.installed" ]; then
		if ! (cd "$ts" && npm ci --no-audit --no-fund >&2); then
			echo "npm could not install the SDK's compiler (typescript, @types/node) from the npm registry"
			return
		fi
		touch "$ts/node_modules/.installed"
	fi
}
typescript_how="install node (>= 20) and npm, with access to the npm registry"

# rust_crates: chooses where cargo takes the Rust SDK's crates from. It sets cargo_args
# (flags for every cargo command of this build), or rust_why when no source has them.
cargo_args=()
rust_why=""
rust_crates() {
	if ! command -v cargo >/dev/null; then
		rust_why="cargo is not installed"
		return
	fi
	local mode=${ADAPTERKIT_RUST_CRATES:-auto}
	case $mode in
	auto | cargo | debian) ;;
	*)
		echo "sdk/make.sh: ADAPTERKIT_RUST_CRATES=$mode: want auto, cargo or debian" >&2
		exit 2
		;;
	esac
	if [ "$mode" != debian ]; then
		# One quick try, without retries and with a short connect timeout, so that a
		# machine without crates.io falls back at once instead of hanging.
		if (cd "$root/sdk/rust" && CARGO_NET_RETRY=0 CARGO_HTTP_TIMEOUT=${ADAPTERKIT_CARGO_TIMEOUT:-10} \
			timeout 300 cargo fetch --quiet >/dev/null 2>&1); then
			return
		fi
		if [ "$mode" = cargo ]; then
			rust_why="cargo cannot fetch libc/log/serde/serde_json/tokio (ADAPTERKIT_RUST_CRATES=cargo: no fallback)"
			return
		fi
	fi
	local c
	for c in libc log serde serde_derive serde_json tokio; do
		if ! compgen -G "$debian_crates/$c-[0-9]*" >/dev/null; then
			if [ "$mode" = debian ]; then
				rust_why="ADAPTERKIT_RUST_CRATES=debian, but $debian_crates has no $c"
			else
				rust_why="cargo cannot resolve libc/log/serde/serde_json/tokio: crates.io is not reachable and Debian's packaged crates are not installed ($debian_crates has no $c)"
			fi
			return
		fi
	done
	if [ "$mode" = debian ]; then
		echo "sdk/make.sh: ADAPTERKIT_RUST_CRATES=debian: the Rust SDK builds offline from Debian's packaged crates in $debian_crates"
	else
		echo "sdk/make.sh: cargo could not fetch the crates (no crates.io?): the Rust SDK builds offline from Debian's packaged crates in $debian_crates"
	fi
	cargo_args=(--offline
		--config "source.crates-io.replace-with=\"debian-packages\""
		--config "source.debian-packages.directory=\"$debian_crates\"")
	# A Cargo.lock written from crates.io may name versions Debian does not package:
	# resolve again against the packaged crates (Cargo.lock is not committed).
	(cd "$root/sdk/rust" && cargo generate-lockfile --quiet "${cargo_args[@]}")
}
rust_how="give cargo access to crates.io, or install Debian's packaged crates (apt-get install $debian_pkgs)"

build() {
	local lang=$1 out=$2 why
	mkdir -p "$out"
	case $lang in
	python)
		why=$(python_why)
		if [ -n "$why" ]; then
			rm -f "$out/pyecho_v1.0.0"
			skip python "pyecho (the Python SDK's echo adapter)" "$why" "$python_how"
			return
		fi
		(
			set -x
			python3 "$root/sdk/python/tools/build_adapter.py" "$root/sdk/python/examples/echo.py" "$out/pyecho_v1.0.0"
		)
		;;
	typescript)
		why=$(typescript_why)
		if [ -n "$why" ]; then
			rm -f "$out/tsecho_v1.0.0"
			skip typescript "tsecho (the TypeScript SDK's echo adapter)" "$why" "$typescript_how"
			return
		fi
		(
			cd "$root/sdk/typescript"
			set -x
			npx tsc -p tsconfig.json
		)
		printf '#!/usr/bin/env node\n// Built by make adapters: the TypeScript SDK echo of this checkout.\nimport(%s);\n' \
			"\"$root/sdk/typescript/dist/examples/echo.js\"" >"$out/tsecho_v1.0.0"
		chmod 0755 "$out/tsecho_v1.0.0"
		;;
	rust)
		rust_crates
		if [ -n "$rust_why" ]; then
			rm -f "$out/rsecho_v1.0.0"
			skip rust "rsecho (the Rust SDK's echo adapter)" "$rust_why" "$rust_how"
			return
		fi
		(
			cd "$root/sdk/rust"
			set -x
			cargo build --release --example echo --example pingpong --example streams "${cargo_args[@]}"
		)
		install -m 0755 "$root/sdk/rust/target/release/examples/echo" "$out/rsecho_v1.0.0"
		;;
	*) usage ;;
	esac
}

test_sdk() {
	local why
	case $1 in
	python)
		why=$(python_why)
		if [ -n "$why" ]; then
			skip python "the Python SDK's tests (sdk/python)" "$why" "$python_how"
			return
		fi
		(cd "$root/sdk/python/tests" && set -x && python3 -m unittest)
		# The package's annotations (it ships py.typed), where mypy is installed.
		if command -v mypy >/dev/null; then
			(cd "$root/sdk/python" && set -x && mypy --strict --python-version 3.9 adapterkit)
		else
			echo "sdk/make.sh: mypy is not installed: the Python SDK's annotations are not checked (apt-get install mypy)"
		fi
		;;
	typescript)
		why=$(typescript_why)
		if [ -n "$why" ]; then
			skip typescript "the TypeScript SDK's tests (sdk/typescript)" "$why" "$typescript_how"
			return
		fi
		(cd "$root/sdk/typescript" && set -x && npm test)
		;;
	rust)
		rust_crates
		if [ -n "$rust_why" ]; then
			skip rust "the Rust SDK's tests (sdk/rust)" "$rust_why" "$rust_how"
			return
		fi
		# The crate's formatting (rustfmt.toml), where rustfmt is installed.
		if cargo fmt --version >/dev/null 2>&1; then
			(cd "$root/sdk/rust" && set -x && cargo fmt --check)
		else
			echo "sdk/make.sh: rustfmt is not installed: the Rust SDK's formatting is not checked (rustup component add rustfmt)"
		fi
		(cd "$root/sdk/rust" && set -x && cargo test --release "${cargo_args[@]}")
		;;
	*) usage ;;
	esac
}

# summary: one line naming every language this run skipped (from $ADAPTERKIT_SKIPLOG),
# and the Windows tests under Wine when make test-windows skipped them (its lines are
# "windows|what|why|how").
summary() {
	local line win=""
	if [ -n "$skiplog" ] && [ -s "$skiplog" ] && grep -q '^windows|' "$skiplog"; then
		win=$(grep '^windows|' "$skiplog" | head -1 | awk -F'|' '{print " SKIP: windows (" $3 "; to get it: " $4 ")"}')
	fi
	if [ -z "$skiplog" ] || ! grep -qv '^windows|' "$skiplog" 2>/dev/null; then
		echo "SDK summary: nothing skipped: python, typescript and rust all took part${win:+.$win}"
		return
	fi
	line=$(grep -v '^windows|' "$skiplog")
	# One "LANG: WHY" per language and reason: "SKIPPED rust: cargo is not installed."
	echo "SDK summary: SKIPPED $(cut -d'|' -f1,3 <<<"$line" | sort -u | sed 's/|/: /' | paste -sd';' - | sed 's/;/; /g'). The SKIP: lines above say how to get each.$win"
}

usage() {
	echo "usage: sdk/make.sh build python|typescript|rust DIR | test python|typescript|rust | summary" >&2
	exit 2
}

case ${1:-} in
build) [ $# -eq 3 ] || usage; build "$2" "$3" ;;
test) [ $# -eq 2 ] || usage; test_sdk "$2" ;;
summary) summary ;;
*) usage ;;
esac
