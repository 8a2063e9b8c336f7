/* Every process of the system with its parent, through libproc2, which is loaded when first needed.
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

/* Every process of the system, sorted by (ppid, pid), in a malloc'ed array. Returns how many, or -errno
 * (-ELIBACC when libproc2 cannot be loaded). */
ssize_t probe_list_every_process(struct probe_process_link **links);
