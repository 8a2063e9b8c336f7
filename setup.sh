#!/usr/bin/env bash
# hangdoc's entry point for a newcomer and for CI, on Debian 12 as root:
#   bash setup.sh demo     install what the build needs, build hangdoc alone, run `hangdoc demo`
#   bash setup.sh test     install what is missing, build with warnings as errors, run the whole suite, then build
#                          again with AddressSanitizer + UBSan and run the suite once more
#   bash setup.sh release  install what the build needs, build one static binary: dist/hangdoc-VERSION-x86_64-linux
#   bash setup.sh portability  the static binary in a bare Debian 11 chroot, the build and tests in another, the
#                          Debian package in Debian 13 (tests/portability/run.sh; CI runs it after the suite)
set -euo pipefail
cd "$(dirname "$0")"

# Debian 12 packages. The build's: the compiler, meson and ninja, and the libraries (pkg-config names in
# meson.build; libproc2 is optional). The suite's: the test runner, man for the
# man page test, binutils' strip for the stripped stack fixture, python3-jsonschema to validate the JSON reports
# against their schema, python3-torch and python3-numpy for the DataLoader scenarios (run with /usr/bin/python3),
# libc6-dbg so that libc's internal functions have names in the stacks (the scenarios that name one of libc's locks
# by the function that takes it expect those names), libgfortran5 for OpenBLAS's OpenMP build (below),
# python3-pyqt5 for Qt's thread pool across fork(), python3-grpcio and python3-h5py for gRPC's channel and h5py's
# lock across fork(), clang and libclang-rt-14-dev for the libFuzzer harnesses, lld for a stack fixture linked the
# way rustc links (segments not page-aligned in the file), gdb and
# strace as the tracers a target may already have (tests/test_hostile.c), slurm-wlm and munge for the one-node Slurm
# cluster that tests/test_slurm.c starts, graphviz to render the DOT pictures in the tests; postgresql-15,
# nginx-light, redis-server, tmux, tini and dumb-init for the healthy real programs a fleet scan must call not hung
# (tests/test_real_software.c; their services are not started: policy_rc_d below); debootstrap for the chroot of
# Debian's development suite (python3.14, PyTorch 2.x) that tests/modern/chroot.sh builds once under /var/cache.
# debhelper and dpkg-dev build the Debian package that `setup.sh portability` (run by CI after the suite) installs.
# python3-pytest and python3-pytest-xdist for the pytest plugin's tests (tests/pytest/), real pytest runs.
# python3-pexpect for a real pexpect session whose spawn.wait() never reads the child's terminal (tests/test_outside.c).
# libfuse3-dev for a real libfuse 3 daemon whose clients wait for it (tests/scenarios/fuse_daemon.c).
# rustc, musl-tools, golang-go, default-jdk-headless and nodejs: the other runtimes' toolchains, which build and run
# the programs of tests/test_runtimes.c (Rust's std locks, a static musl binary, Go, Java, Node's worker_threads).
# `packages` is every package setup.sh installs; the demo and the release take the build's alone.
packages=(gcc libc6-dev binutils meson ninja-build pkg-config libproc2-dev libunwind-dev libelf-dev libjson-c-dev
          zlib1g-dev libcriterion-dev man-db python3 python3-jsonschema python3-torch python3-numpy libc6-dbg
          libgfortran5 python3-pyqt5 python3-grpcio python3-h5py clang libclang-rt-14-dev lld gdb strace slurm-wlm munge
          graphviz postgresql-15 nginx-light redis-server tmux tini dumb-init debootstrap debhelper dpkg-dev
          python3-pytest python3-pytest-xdist python3-pexpect libfuse3-dev rustc musl-tools golang-go
          default-jdk-headless nodejs)
build_packages=(gcc libc6-dev binutils meson ninja-build pkg-config libproc2-dev libunwind-dev libelf-dev libjson-c-dev
                zlib1g-dev)

# step WHAT COMMAND...: one line for the step; the command's own output goes to a log shown only if it fails
log=${TMPDIR:-/tmp}/hangdoc-setup.$$.log
step() {
    local what=$1
    shift
    printf 'setup.sh: %s ...' "$what"
    if "$@" >"$log" 2>&1; then
        printf ' done\n'
        rm -f "$log"
    else
        local status=$?
        printf ' failed (exit %d):\n' "$status"
        cat "$log" >&2
        rm -f "$log"
        exit "$status"
    fi
}

# install_missing PACKAGE...: what of them is not installed yet
install_missing() {
    local missing=() package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup.sh: missing Debian packages: ${missing[*]}; run as root, or install them first" >&2
        exit 1
    fi
    step "updating the package lists" apt-get update -qq
    # The servers among them (postgresql, nginx, redis) would start as services on install: the tests start their
    # own, by pid, in a temporary directory. A policy-rc.d that says 101 keeps invoke-rc.d from starting any,
    # only for this install, and only where the machine has none of its own.
    local policy=/usr/sbin/policy-rc.d own_policy=
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && own_policy=1
    fi
    local status=0
    ( step "installing ${#missing[@]} Debian packages (${missing[*]})" \
        env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" ) ||
        status=$?
    [ -n "$own_policy" ] && rm -f "$policy"
    [ "$status" -eq 0 ] || exit "$status"
}

# OpenBLAS's OpenMP build (Debian's libopenblas0-openmp) for the scenario of a forked child that spins in it, unpacked
# into build-deps/openblas-openmp beside the project: installing the package would switch the machine's BLAS (an
# update-alternatives link every numpy of the machine follows).
unpack_openblas_openmp() {
    local target=build-deps/openblas-openmp scratch
    [ -f "$target/libblas.so.3" ] && return 0
    scratch=$(mktemp -d)
    chmod 755 "$scratch"
    (cd "$scratch" && apt-get download -qq libopenblas0-openmp) &&
        dpkg-deb -x "$scratch"/libopenblas0-openmp_*.deb "$scratch/root" &&
        mkdir -p "$target" && cp -a "$scratch"/root/usr/lib/*/openblas-openmp/. "$target/"
    local status=$?
    rm -rf "$scratch"
    return $status
}

# build DIR [meson options...]: configure once, then build
build() {
    local directory=$1
    shift
    if [ ! -f "$directory/build.ninja" ]; then
        step "configuring $directory" meson setup "$directory" --werror "$@"
    fi
    step "building $directory" ninja -C "$directory"
}

run_suite() {
    local directory=$1
    meson test -C "$directory" --print-errorlogs --num-processes 2
}

# One closing line over both runs, counted from the Criterion syntheses and meson's own results.
summarise() {
    python3 - "$@" <<'PY'
import json, re, sys
passed = failed = 0
for directory in sys.argv[1:]:
    with open(f"{directory}/meson-logs/testlog.json") as log:
        for line in log:
            test = json.loads(line)
            output = (test.get("stdout") or "") + (test.get("stderr") or "")
            synthesis = re.findall(r"Tested: (\d+) \| Passing: (\d+) \| Failing: (\d+) \| Crashing: (\d+)", output)
            ok = test["result"] == "OK"
            if synthesis:
                _, passing, failing, crashing = map(int, synthesis[-1])
                passed += passing
                # a runner that failed without a failing test (timeout, crash outside a test) counts once
                failed += failing + crashing or (0 if ok else 1)
            else:
                passed += ok
                failed += not ok
print(f"tests: {passed} passed, {failed} failed")
PY
}

case "${1:-}" in
demo)
    # the demo needs hangdoc alone: the build's packages, and a build without the test suite
    install_missing "${build_packages[@]}"
    build build -Dtests=false
    ./build/hangdoc demo
    ;;
release)
    # one static binary: dist/hangdoc-VERSION-x86_64-linux
    install_missing "${build_packages[@]}"
    build build-release -Dstatic=true -Dtests=false -Dbuildtype=release
    version=$(sed -n "s/^  version : '\(.*\)',$/\1/p" meson.build)
    mkdir -p dist
    strip -o "dist/hangdoc-$version-x86_64-linux" build-release/hangdoc
    echo "setup.sh: dist/hangdoc-$version-x86_64-linux ($(stat -c %s "dist/hangdoc-$version-x86_64-linux") bytes):"
    "dist/hangdoc-$version-x86_64-linux" --version
    ;;
portability)
    # the static binary in a bare Debian 11 chroot, and the build and tests from source in another (issue 27)
    install_missing "${packages[@]}"
    bash tests/portability/run.sh
    ;;
test)
    install_missing "${packages[@]}"
    step "unpacking OpenBLAS's OpenMP build for a scenario" unpack_openblas_openmp
    # Python 3.14 and PyTorch 2.x, from Debian's development suite: a chroot built once, outside the clone; when it
    # cannot be built, the script says why in one line and those tests skip with it
    printf 'setup.sh: the chroot of Debian'"'"'s development suite (built once) ...\n'
    bash tests/modern/chroot.sh
    # a build the demo configured without the suite gets it back
    if [ -f build/build.ninja ] && meson introspect build --buildoptions |
        python3 -c 'import json, sys; sys.exit(any(o["name"] == "tests" and not o["value"] for o in json.load(sys.stdin)) == 0)'; then
        step "configuring build with the test suite" meson configure build -Dtests=true
    fi
    build build
    # The sanitized build compiles while the plain suite runs (its tests mostly sleep in their fixtures' waits): on
    # one core at the lowest priority, so that the tests' processes keep theirs; it is done long before the suite.
    if [ ! -f build-sanitize/build.ninja ]; then
        step "configuring build-sanitize" meson setup build-sanitize --werror -Db_sanitize=address,undefined \
            -Db_lundef=false
    fi
    sanitize_log=${TMPDIR:-/tmp}/hangdoc-sanitize-build.$$.log
    nice -n 19 ninja -j1 -C build-sanitize >"$sanitize_log" 2>&1 &
    sanitize_build=$!
    status=0
    run_suite build || status=$?
    printf 'setup.sh: building build-sanitize (begun beside the suite) ...'
    if wait "$sanitize_build"; then
        printf ' done\n'
    else
        printf ' failed:\n'
        cat "$sanitize_log" >&2
        rm -f "$sanitize_log"
        exit 1
    fi
    rm -f "$sanitize_log"
    build build-sanitize -Db_sanitize=address,undefined -Db_lundef=false
    export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
    run_suite build-sanitize || status=$?
    summarise build build-sanitize
    exit $status
    ;;
*)
    echo "usage: bash setup.sh demo|test|release|portability" >&2
    exit 64
    ;;
esac
