#!/bin/bash
# chroot.sh [ROOT]: makes sure ROOT (default $HANGDOC_MODERN_ROOT, else /var/cache/hangdoc/sid) holds a chroot of
# Debian's development suite with the versions users run: CPython 3.14 (the default python3 there) and 3.13,
# PyTorch 2.x, numpy 2.x, OpenCV, h5py and gRPC, as Debian packages, and OpenBLAS's OpenMP build (the chroot's BLAS
# then, as the fixture of a child forked after a numpy product wants it); pytest and pytest-xdist of today for the
# pytest plugin's tests, which run hangdoc inside (libunwind8: what this machine's build of it links). The 3.14
# tests of the python, python_hangs, inheritance and pipes suites start their fixtures inside it with in_sid.
#
# Built once and kept outside the clone: a fresh clone's CI run finds it. A chroot that has every package (its stamp
# file says so) is used as it is; one without is completed, or built again from nothing when that fails. The
# development suite changes daily: when it cannot be built, ROOT.unusable holds the reason in one line, the tests
# skip with it, and this script says so and still succeeds (the rest of the suite runs). Needs root and debootstrap.
set -uo pipefail
. "$(dirname "$0")/../chroots.sh"

root=${1:-${HANGDOC_MODERN_ROOT:-/var/cache/hangdoc/sid}}
packages="python3 python3.14 python3.13 python3-torch python3-numpy python3-opencv python3-h5py python3-grpcio"
packages+=" libopenblas0-openmp python3-pytest python3-pytest-xdist libunwind8" # one line: the stamp's first line is compared with it
stamp=$root/.hangdoc-modern
unusable=$root.unusable
log=$root.log

ready() {
    [ -f "$stamp" ] && [ "$(head -n 1 "$stamp")" = "$packages" ]
}

give_up() {
    echo "$1" >"$unusable"
    echo "chroot.sh: $1; the tests on Debian's development suite are skipped" >&2
    exit 0
}

install_packages() {
    local target=$1
    chroot_apt "$target" update && chroot_apt "$target" install -y --no-install-recommends $packages
}

record() {
    local target=$1
    { echo "$packages"
      chroot_run "$target" dpkg-query -W -f='${Package} ${Version}\n' $packages; } >"$target/.hangdoc-modern.new" &&
        mv "$target/.hangdoc-modern.new" "$target/.hangdoc-modern"
}

ready && exit 0
[ "$(id -u)" -eq 0 ] || give_up "building the chroot needs root"
command -v debootstrap >/dev/null || give_up "debootstrap is not installed"
mkdir -p "$(dirname "$root")"
: >"$log"
if [ -d "$root" ] && install_packages "$root" >>"$log" 2>&1 && record "$root" >>"$log" 2>&1; then
    rm -f "$unusable"
    exit 0
fi
echo "chroot.sh: building $root (Debian's development suite, once) ..." >&2
chroot_debootstrap sid "$root" "$log" || give_up "debootstrap of Debian's development suite failed (see $log)"
install_packages "$root" >>"$log" 2>&1 ||
    give_up "the packages cannot be installed in Debian's development suite today (see $log)"
record "$root" >>"$log" 2>&1 || give_up "the installed packages cannot be listed"
rm -f "$unusable"
