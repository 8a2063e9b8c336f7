#!/bin/bash
# chroot.sh [ROOT]: makes sure ROOT (default $HANGDOC_MODERN_ROOT, else /var/cache/hangdoc/sid) holds a chroot of
# Debian's development suite with the versions users run: CPython 3.14 (the default python3 there) and 3.13,
# PyTorch 2.x, numpy 2.x, OpenCV, h5py and gRPC, as Debian packages, and OpenBLAS's OpenMP build (the chroot's BLAS
# then, as the fixture of a child forked after a numpy product wants it). The 3.14 tests of the python, python_hangs,
# inheritance and pipes suites start their fixtures inside it with in_sid.
#
# Built once and kept outside the clone: a fresh clone's CI run finds it. A chroot that has every package (its stamp
# file says so) is used as it is; one without is completed, or built again from nothing when that fails. The
# development suite changes daily: when it cannot be built, ROOT.unusable holds the reason in one line, the tests
# skip with it, and this script says so and still succeeds (the rest of the suite runs). Needs root and debootstrap.
set -uo pipefail

root=${1:-${HANGDOC_MODERN_ROOT:-/var/cache/hangdoc/sid}}
packages="python3 python3.14 python3.13 python3-torch python3-numpy python3-opencv python3-h5py python3-grpcio"
packages+=" libopenblas0-openmp" # one line: the stamp's first line is compared with it
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

# The Debian mirror this machine's own package lists use (deb822 or one-line sources), so that the chroot comes
# from wherever the machine's packages come from.
mirror() {
    local sources
    sources=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list 2>/dev/null)
    { sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' <<<"$sources"
      sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\).*/\2/p' <<<"$sources"; } |
        grep -v -- '-security' | head -n 1
}

# apt-get inside the chroot, with its own /proc in a mount namespace that ends with it.
in_chroot() {
    unshare --mount --propagation private /bin/sh -c \
        'mount -t proc proc "$1/proc" && shift && exec chroot "$@"' in_chroot "$1" "$@"
}

# The archive's Release files are checked for their signature, not their age: a mirror that is a snapshot of the
# archive serves files whose Valid-Until has passed.
install_packages() {
    local target=$1
    in_chroot "$target" env DEBIAN_FRONTEND=noninteractive apt-get update -qq -o Acquire::Check-Valid-Until=false &&
        in_chroot "$target" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            $packages
}

record() {
    local target=$1
    { echo "$packages"
      in_chroot "$target" dpkg-query -W -f='${Package} ${Version}\n' $packages; } >"$target/.hangdoc-modern.new" &&
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
source=$(mirror)
[ -n "$source" ] || give_up "no Debian mirror in this machine's apt sources"
rm -rf "$root.new"
echo "chroot.sh: building $root (Debian's development suite, once) ..." >&2
debootstrap --variant=minbase sid "$root.new" "$source" >>"$log" 2>&1 ||
    { rm -rf "$root.new"; give_up "debootstrap of Debian's development suite failed (see $log)"; }
install_packages "$root.new" >>"$log" 2>&1 ||
    { rm -rf "$root.new"; give_up "the packages cannot be installed in Debian's development suite today (see $log)"; }
record "$root.new" >>"$log" 2>&1 || { rm -rf "$root.new"; give_up "the installed packages cannot be listed"; }
rm -rf "$root" && mv "$root.new" "$root" && rm -f "$unusable"
