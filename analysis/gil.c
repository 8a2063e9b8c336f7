/* A GIL waiter caught between two waits (gil.h). */
#include "gil.h"

static bool inside_gil_state(const struct hd_python *python, uint64_t address)
{
    return address && address >= python->gil_address && address - python->gil_address < python->gil_size;
}

bool report_gil_wait_resumed(const struct hd_process *process, const struct hd_thread *thread, struct hd_thread *out)
{
    const struct hd_python *python = &process->python;
    /* on a CPU, or preempted in user space; a thread state that neither holds the GIL nor waits for it; and a GIL
     * held by another: with a free GIL a waiter would have taken it */
    bool caught_between_waits = thread->syscall.state == HD_SYSCALL_RUNNING ||
                                thread->syscall.state == HD_SYSCALL_NONE;
    if (!python->read || !python->gil_locked || thread->gil != HD_GIL_RELEASED || !caught_between_waits)
        return false;
    const struct hd_thread_sample *earlier = hd_thread_earlier_futex(thread);
    if (!earlier || !inside_gil_state(python, earlier->wait_address))
        return false;
    *out = *thread;
    out->state = 'S';
    out->syscall = earlier->syscall;
    out->gil = HD_GIL_WAITS;
    out->wait = (struct hd_wait){
        .kind = HD_WAIT_FUTEX,
        .operation = earlier->wait_operation,
        .timeout = earlier->timeout,
        .address = earlier->wait_address,
        .futex_private = earlier->futex_private,
        .expected = earlier->wait_expected,
        .fd = -1,
        .lock = python->gil_lock,
    };
    const struct hd_mapping *mapping = hd_process_find_mapping(process, earlier->wait_address);
    out->wait.mapping_kind = hd_mapping_classify(mapping);
    if (mapping)
        out->wait.mapping = *mapping;
    return true;
}
