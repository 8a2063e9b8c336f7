/* Why the kernel refused hangdoc something of another process (access.h). */
#include "access.h"

#include "procfs.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* capability numbers (linux/capability.h) */
#define CAP_DAC_OVERRIDE_BIT 1
#define CAP_DAC_READ_SEARCH_BIT 2
#define CAP_SYS_PTRACE_BIT 19

static struct {
    pthread_once_t once;
    uint64_t effective; /* CapEff */
    int yama_scope;
} own = { .once = PTHREAD_ONCE_INIT };

/* The number after `key` in a /proc status text, in `base`; `missing` when absent. */
static unsigned long long status_number(const char *text, const char *key, int base, unsigned long long missing)
{
    const char *line = strstr(text, key);
    return line ? strtoull(line + strlen(key), NULL, base) : missing;
}

static void read_own(void)
{
    char text[8192];
    if (probe_read_file("/proc/self/status", text, sizeof text) > 0)
        own.effective = status_number(text, "\nCapEff:", 16, 0);
    char scope[16];
    if (probe_read_file("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof scope) > 0)
        own.yama_scope = atoi(scope);
}

static bool has_capability(int bit)
{
    pthread_once(&own.once, read_own);
    return (own.effective >> bit) & 1;
}

int probe_access_yama_scope(void)
{
    pthread_once(&own.once, read_own);
    return own.yama_scope;
}

bool probe_access_can_ptrace_anyone(void)
{
    return has_capability(CAP_SYS_PTRACE_BIT);
}

static uid_t owner_of(pid_t pid)
{
    char path[64], text[8192];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (probe_read_file(path, text, sizeof text) <= 0)
        return (uid_t)-1;
    /* Uid: real, effective, saved, filesystem: /proc/<pid> belongs to the effective one */
    const char *line = strstr(text, "\nUid:");
    unsigned long real, effective;
    return line && sscanf(line + 5, "%lu %lu", &real, &effective) == 2 ? (uid_t)effective : (uid_t)-1;
}

/* The file mode's check, made before the ptrace check when the file is opened. */
static bool explain_file_mode(uid_t owner, char *why, size_t size)
{
    uid_t self = geteuid();
    if (owner == (uid_t)-1 || owner == self || has_capability(CAP_DAC_READ_SEARCH_BIT) ||
        has_capability(CAP_DAC_OVERRIDE_BIT))
        return false;
    if (probe_access_can_ptrace_anyone())
        snprintf(why, size, "its /proc files are uid %lu's only (mode 0400): hangdoc runs as uid %lu with "
                            "CAP_SYS_PTRACE but without CAP_DAC_READ_SEARCH, which opening them needs too",
                 (unsigned long)owner, (unsigned long)self);
    else
        snprintf(why, size, "owned by uid %lu, and hangdoc runs as uid %lu without CAP_SYS_PTRACE",
                 (unsigned long)owner, (unsigned long)self);
    return true;
}

/* ptrace_may_access()'s refusal, in the order the kernel checks. */
static void explain_ptrace(uid_t owner, char *why, size_t size)
{
    bool capable = probe_access_can_ptrace_anyone();
    int scope = probe_access_yama_scope();
    uid_t self = geteuid();
    if (scope >= 3)
        snprintf(why, size, "Yama ptrace_scope is 3: ptrace is disabled until reboot");
    else if (!capable && owner != (uid_t)-1 && owner != self)
        snprintf(why, size, "owned by uid %lu, and hangdoc runs as uid %lu without CAP_SYS_PTRACE",
                 (unsigned long)owner, (unsigned long)self);
    else if (!capable && scope == 2)
        snprintf(why, size, "Yama ptrace_scope is 2: only a process with CAP_SYS_PTRACE may attach");
    else if (!capable && scope == 1)
        snprintf(why, size, "Yama ptrace_scope is 1: only an ancestor of the target or a process with "
                            "CAP_SYS_PTRACE may attach (run hangdoc as root, or sysctl kernel.yama.ptrace_scope=0)");
    else if (!capable)
        snprintf(why, size, "the kernel refused (EPERM) and hangdoc lacks CAP_SYS_PTRACE (a container without "
                            "it?): the target is not dumpable or lives in another user namespace");
    else
        snprintf(why, size, "the kernel refused (EPERM): a security module, or a user namespace the target is "
                            "not in");
}

void probe_access_explain(pid_t pid, uid_t owner_uid, enum probe_access_kind kind, char *why, size_t size)
{
    uid_t owner = owner_uid != (uid_t)-1 ? owner_uid : owner_of(pid);
    if (kind == PROBE_ACCESS_OWNER_FILE && explain_file_mode(owner, why, size))
        return;
    explain_ptrace(owner, why, size);
}
