#!/bin/bash
# bash setup.sh portability: hangdoc where its users are (issue 27), proved in chroots of Debian releases built once
# under /var/cache/hangdoc (chroots.sh):
#   1. the static binary (setup.sh release), copied into a bare Debian 11 chroot where nothing is installed,
#      diagnoses the demo's hung tree started there, as root and as an unprivileged user: inherited-lock, exit 2;
#   2. the project builds from source in a Debian 11 chroot with only Debian 11's packages (meson 0.56, gcc 10,
#      glibc 2.31, procps 3.3 without libproc2, libunwind 1.3, elfutils 0.183, json-c 0.15, Criterion 2.3), with
#      warnings as errors, and passes its unit and scenario tests there;
#   3. the same in a chroot of Debian's development suite: the newest glibc, gcc and meson;
#   4. the Debian package (debian/, dpkg-buildpackage -us -uc -b, in a copy of the source outside the clone)
#      installs with apt in a Debian 13 chroot, and `hangdoc demo` works there.
# Each check prints one line; the script fails if one fails. Processes started in a chroot are processes of this
# kernel; each chroot's mounts live in a mount namespace that ends with the command.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/chroots.sh

cache=${HANGDOC_CHROOT_CACHE:-/var/cache/hangdoc}
log=${TMPDIR:-/tmp}/hangdoc-portability.$$.log
: >"$log"
failed=0

say() {
    local status=$1
    shift
    if [ "$status" -eq 0 ]; then
        echo "portability: $* ... passed"
    else
        echo "portability: $* ... FAILED (log: $log)"
        failed=1
    fi
}

# Debian 11's packages for building hangdoc and running its unit and scenario tests
build_packages="gcc libc6-dev binutils meson ninja-build pkg-config libunwind-dev libelf-dev libjson-c-dev
zlib1g-dev libcriterion-dev python3 python3-jsonschema man-db"

# ensure_chroot ROOT [PACKAGES [SUITE]]: the chroot ROOT of SUITE (Debian 11 by default), with PACKAGES installed
# (its stamp names them)
ensure_chroot() {
    local root=$1 packages=${2:-} suite=${3:-bullseye}
    local stamp="$root/.hangdoc-packages"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(echo $packages)" ]; then
        return 0
    fi
    echo "portability: building $root (Debian $suite, once) ..."
    chroot_debootstrap "$suite" "$root" "$log" || return 1
    if [ -n "$packages" ]; then
        chroot_apt "$root" update >>"$log" 2>&1 &&
            chroot_apt "$root" install -y --no-install-recommends $packages >>"$log" 2>&1 || return 1
    fi
    echo $packages >"$stamp"
}

static_binary_in_a_bare_chroot() {
    local root="$cache/bullseye-bare" binary output status
    bash setup.sh release >>"$log" 2>&1 || return 1
    binary=$(ls dist/hangdoc-*-x86_64-linux | head -n 1)
    ensure_chroot "$root" || return 1
    cp "$binary" "$root/hangdoc" && chmod 755 "$root/hangdoc"
    local user
    # as root, and as a user of no privilege (65534, nobody) diagnosing the tree it started, as a job's user would
    for user in 0 65534; do
        output=$(chroot_run "$root" setpriv --reuid "$user" --regid "$user" --clear-groups /hangdoc demo 2>&1)
        status=$?
        echo "$output" >>"$log"
        [ "$status" -eq 2 ] && grep -q '\[inherited-lock, certain\]' <<<"$output" || break
    done
    rm -f "$root/hangdoc"
    [ "$status" -eq 2 ] && grep -q '\[inherited-lock, certain\]' <<<"$output"
}

# source_build ROOT SUITE: builds with warnings as errors in the chroot ROOT of SUITE, and runs the unit and
# scenario tests there
source_build() {
    local root=$1 suite=$2
    ensure_chroot "$root" "$build_packages" "$suite" || return 1
    rm -rf "$root/src" && mkdir -p "$root/src" || return 1
    git ls-files -z | xargs -0 tar -c | tar -x -C "$root/src" || return 1
    chroot_run "$root" /bin/sh -c '
        cd /src &&
            meson setup build --werror &&
            ninja -C build &&
            meson test -C build --suite unit --num-processes 2 --print-errorlogs &&
            meson test -C build scenarios --print-errorlogs' >>"$log" 2>&1
}

debian_package_on_debian_13() {
    local root="$cache/trixie-deb" build package status output
    build=$(mktemp -d) || return 1
    mkdir "$build/hangdoc" && git ls-files -z | xargs -0 tar -c | tar -x -C "$build/hangdoc" &&
        (cd "$build/hangdoc" && dpkg-buildpackage -us -uc -b) >>"$log" 2>&1 &&
        ensure_chroot "$root" "" trixie
    status=$?
    package=$(ls "$build"/hangdoc_*_amd64.deb 2>/dev/null | head -n 1)
    if [ "$status" -eq 0 ] && [ -n "$package" ]; then
        cp "$package" "$root/root/hangdoc.deb"
        chroot_run "$root" dpkg --purge hangdoc >>"$log" 2>&1
        chroot_apt "$root" update >>"$log" 2>&1 &&
            chroot_apt "$root" install -y --no-install-recommends /root/hangdoc.deb >>"$log" 2>&1
        status=$?
        rm -f "$root/root/hangdoc.deb"
        if [ "$status" -eq 0 ]; then
            output=$(chroot_run "$root" hangdoc demo 2>&1)
            status=$?
            echo "$output" >>"$log"
            [ "$status" -eq 2 ] && grep -q '\[inherited-lock, certain\]' <<<"$output" &&
                [ -f "$root/usr/share/man/man1/hangdoc.1.gz" ] && [ -f "$root/usr/share/hangdoc/hangdoc.report-2.schema.json" ] &&
                grep -qx 'pytest_hangdoc = pytest_hangdoc' "$root"/usr/lib/python3/dist-packages/pytest_hangdoc-*.dist-info/entry_points.txt &&
                [ -f "$root/usr/lib/python3/dist-packages/pytest_hangdoc/watcher.py" ]
            status=$?
        fi
    else
        status=1
    fi
    rm -rf "$build"
    return "$status"
}

static_binary_in_a_bare_chroot
say $? "the static binary diagnoses the demo in a bare Debian 11 chroot, as root and as uid 65534 (inherited-lock, exit 2)"
source_build "$cache/bullseye-build" bullseye
say $? "built from source in a Debian 11 chroot with its own packages; unit and scenario tests pass"
source_build "$cache/sid-build" sid
say $? "built from source in a chroot of Debian's development suite (glibc, gcc and meson of today); unit and scenario tests pass"
debian_package_on_debian_13
say $? "the Debian package installs with apt in a Debian 13 chroot, with its man page, schemas and pytest plugin; the demo runs"
[ "$failed" -eq 0 ] && rm -f "$log"
exit "$failed"
