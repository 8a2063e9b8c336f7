/* What this kernel offers hangdoc, probed once on hangdoc's own process: /proc/<tid>/syscall (absent without
 * CONFIG_HAVE_ARCH_TRACEHOOK and in sandboxes such as gVisor), process_vm_readv(2) (absent without
 * CONFIG_CROSS_MEMORY_ATTACH) and /proc/<pid>/mem. A missing facility is not a target's fault: the report says so
 * once, and what hangdoc reads instead. Thread-safe. */
#pragma once

#include <stdbool.h>

struct probe_facilities {
    bool syscall_files;       /* /proc/<tid>/syscall exists */
    bool cross_memory_attach; /* process_vm_readv(2) is implemented */
    bool proc_mem;            /* /proc/<pid>/mem can be opened */
};

const struct probe_facilities *probe_facilities(void);
