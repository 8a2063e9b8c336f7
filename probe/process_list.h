/* Every process of the system with its parent, through libproc2, which is loaded when first needed, or read from
 * /proc itself where libproc2 is not there (procps 3.3 systems: Debian 11, Ubuntu 22.04, RHEL 8 and 9; a build
 * without its headers; the static binary, which cannot dlopen). Either gives the same list.
 *
 * Finding a tree needs this list only on kernels without children files (children.h), and `hangdoc run` needs it
 * once to find its command's processes. Linking libproc2 would load it, libsystemd and five more libraries at
 * every start (half a millisecond, a sixth of a whole diagnosis of a small process), so it is opened with dlopen()
 * on the first call instead, as symbols.c opens libstdc++ for demangling.
 */
#pragma once

#include <sys/types.h>

struct probe_process_link {
    pid_t pid;
    pid_t ppid;
    char state;
};

/* Every process of the system, sorted by (ppid, pid), in a malloc'ed array. Returns how many, or -errno. */
ssize_t probe_list_every_process(struct probe_process_link **links);

/* The same list read from /proc alone: what probe_list_every_process() gives where libproc2 is not there. */
ssize_t probe_list_every_process_from_proc(struct probe_process_link **links);
