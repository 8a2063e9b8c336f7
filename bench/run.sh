#!/usr/bin/env bash
# Benchmark hangdoc against gdb and eu-stack (bench/run.py says how), writing BENCHMARKS.md (or the file given);
# with --python, the Python view against gdb's py-bt (bench/python_view.py); with --merge, `hangdoc merge` over
# 1,024 hosts' reports (bench/merge.py); with --static, the static binary against the dynamic build
# (bench/static.py).
# Not a test: run it by hand on a quiet machine, after `ninja -C build`.
set -euo pipefail
cd "$(dirname "$0")/.."
# --static: the static binary against the dynamic build (bench/static.py); it needs no peer
if [ "${1:-}" = --static ]; then
    ls dist/hangdoc-*-x86_64-linux >/dev/null 2>&1 || { echo "bench: bash setup.sh release first" >&2; exit 1; }
    exec /usr/bin/python3 bench/static.py "$@"
fi
packages=(gdb elfutils time gcc)
# --python: the Python view against gdb with CPython's own extension (python3.11-dbg)
# --merge: `hangdoc merge` over the reports of 1,024 simulated hosts (bench/merge.py)
python_part=false
merge_part=false
for argument in "$@"; do
    [ "$argument" = --python ] && python_part=true
    [ "$argument" = --merge ] && merge_part=true
done
$python_part && packages+=(python3.11-dbg)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
[ -x "${HANGDOC:-build/hangdoc}" ] || { echo "bench: build hangdoc first (ninja -C build)" >&2; exit 1; }
if $python_part; then
    exec /usr/bin/python3 bench/python_view.py "$@"
fi
if $merge_part; then
    exec /usr/bin/python3 bench/merge.py "$@"
fi
exec /usr/bin/python3 bench/run.py "$@"
