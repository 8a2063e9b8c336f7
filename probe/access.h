/* Why the kernel refused hangdoc something of another process, in words that name what is missing.
 *
 * Two checks guard a process's inner state, and they need different things:
 * - ptrace_may_access(): attaching, process_vm_readv(2), /proc/<pid>/mem, and the ptrace check that opening
 *   /proc/<pid>/{syscall,auxv,stack,environ,fd} and reading /proc/<pid>/exe make. It passes for the same uid or
 *   CAP_SYS_PTRACE, unless Yama's ptrace_scope, a user namespace or a security module says no.
 * - The file mode: syscall, auxv, stack and environ are 0400 and fd/ is 0500, owned by the process's uid. Opening
 *   one as another uid needs CAP_DAC_READ_SEARCH (or CAP_DAC_OVERRIDE) besides: CAP_SYS_PTRACE alone, as a
 *   container is often given it, attaches and reads memory but does not open them.
 * hangdoc's own capabilities and the Yama scope are read once.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum probe_access_kind {
    PROBE_ACCESS_PTRACE,     /* an attach, a memory read, exe: ptrace_may_access() alone */
    PROBE_ACCESS_OWNER_FILE, /* a /proc/<pid> file of mode 0400/0500: its owner's, then ptrace_may_access() */
};

/* Why `kind` of access to process `pid`, whose /proc files belong to `owner_uid` ((uid_t)-1: read it), was refused
 * with EPERM or EACCES; into `why`. */
void probe_access_explain(pid_t pid, uid_t owner_uid, enum probe_access_kind kind, char *why, size_t size);

/* Yama's kernel.yama.ptrace_scope, 0 when the kernel has no Yama. */
int probe_access_yama_scope(void);
/* Whether hangdoc's effective capabilities include CAP_SYS_PTRACE. */
bool probe_access_can_ptrace_anyone(void);
