# Helpers for the chroots of Debian releases the suite runs things in (sourced by tests/modern/chroot.sh and
# tests/portability/run.sh). The chroots are built once, kept outside the clone (under /var/cache/hangdoc), and
# come from the Debian mirror this machine's own apt sources name.

# The Debian mirror of this machine's package lists (deb822 or one-line sources).
chroot_mirror() {
    local sources
    sources=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list 2>/dev/null)
    { sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' <<<"$sources"
      sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\).*/\2/p' <<<"$sources"; } |
        grep -v -- '-security' | head -n 1
}

# chroot_run ROOT COMMAND...: COMMAND in ROOT, in a mount namespace of its own with /proc, a /tmp and a pty
# instance mounted, all of which go away with it.
chroot_run() {
    unshare --mount --propagation private /bin/sh -c '
        root=$1
        shift
        mount -t proc proc "$root/proc" &&
            mount -t tmpfs tmpfs "$root/tmp" &&
            mkdir -p "$root/dev/pts" && mount -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts" &&
            touch "$root/dev/ptmx" && mount --bind "$root/dev/pts/ptmx" "$root/dev/ptmx" &&
            exec chroot "$root" "$@"' chroot_run "$@"
}

# chroot_apt ROOT ARGUMENT...: apt-get in ROOT. The archive's Release files are checked for their signature, not
# their age: a mirror that is a snapshot of the archive serves files whose Valid-Until has passed.
chroot_apt() {
    local root=$1
    shift
    chroot_run "$root" env DEBIAN_FRONTEND=noninteractive apt-get -qq -o Acquire::Check-Valid-Until=false "$@"
}

# chroot_debootstrap SUITE ROOT LOG: a minimal chroot of SUITE in ROOT, built in ROOT.new and moved there whole.
chroot_debootstrap() {
    local suite=$1 root=$2 log=$3 source
    source=$(chroot_mirror)
    [ -n "$source" ] || { echo "no Debian mirror in this machine's apt sources" >>"$log"; return 1; }
    rm -rf "$root.new"
    mkdir -p "$(dirname "$root")"
    debootstrap --variant=minbase "$suite" "$root.new" "$source" >>"$log" 2>&1 || { rm -rf "$root.new"; return 1; }
    rm -rf "$root" && mv "$root.new" "$root"
}
