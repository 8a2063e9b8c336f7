/* libFuzzer harness: the /proc file formats hangdoc reads from targets and the kernel (probe/procfs.h, maps.h,
 * fds.h). The first byte picks the parser, the rest is the file. Every parser must stay inside the bytes it is given
 * and never crash; the results are touched so that the sanitizers see them read. */
#include "fds.h"
#include "maps.h"
#include "procfs.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *text = (const char *)data + 1;
    size_t length = size - 1;
    switch (data[0] % 10) {
    case 0: {
        struct probe_stat stat;
        if (probe_parse_stat(text, length, &stat))
            sink += (uint64_t)stat.ppid + stat.cpu_ticks + (uint64_t)stat.state;
        break;
    }
    case 1: {
        struct probe_status status;
        if (probe_parse_status(text, length, &status))
            sink += (uint64_t)status.tracer_pid + status.nspid_levels + (uint64_t)status.nspid_innermost;
        break;
    }
    case 2: {
        struct probe_sched sched;
        if (probe_parse_sched(text, length, &sched))
            sink += (uint64_t)(int64_t)(sched.exec_start_ms > 0 && sched.exec_start_ms < 1e18 ? sched.exec_start_ms : 0) +
                    sched.voluntary_switches;
        break;
    }
    case 3: {
        struct hd_syscall syscall;
        if (probe_parse_syscall(text, length, &syscall))
            sink += (uint64_t)syscall.nr + syscall.args[5];
        break;
    }
    case 4: {
        char **argv = NULL;
        size_t argc = 0;
        bool truncated = false;
        if (probe_parse_cmdline(text, length, 64, &argv, &argc, &truncated)) {
            for (size_t i = 0; i < argc; i++) {
                sink += strlen(argv[i]);
                free(argv[i]);
            }
            free(argv);
        }
        break;
    }
    case 5: {
        struct hd_mapping mapping;
        if (probe_parse_maps_line(text, length, &mapping)) {
            sink += mapping.start + mapping.end + (mapping.path ? strlen(mapping.path) : 0);
            free(mapping.path);
        }
        break;
    }
    case 6:
        sink += (uint64_t)(int64_t)probe_parse_fdinfo_access_mode(text, length);
        break;
    case 7: {
        int fds[16];
        bool truncated;
        unsigned count = probe_parse_epoll_targets(text, length, fds, 16, &truncated);
        for (unsigned i = 0; i < count; i++)
            sink += (uint64_t)fds[i];
        break;
    }
    case 8: {
        uint64_t signals;
        sink += probe_parse_timers(text, length, &signals) + signals;
        break;
    }
    case 9:
        sink += probe_parse_fdinfo_signalfd_mask(text, length);
        break;
    }
    return 0;
}
