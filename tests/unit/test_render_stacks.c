/* Grouped native stacks in text, and a thread's stack in JSON (render/render_stacks.h), over hand-built threads. */
#include "render_stacks.h"
#include "samples.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static struct hd_frame frame(uint64_t pc, const char *module, uint64_t module_offset, const char *symbol,
                             uint64_t symbol_offset)
{
    return (struct hd_frame){ .pc = pc, .module = module ? strdup(module) : NULL, .module_offset = module_offset,
                              .symbol = symbol ? strdup(symbol) : NULL, .symbol_offset = symbol_offset };
}

/* A worker stack: libgomp internals without a symbol, then a named function. `bias` differs per process. */
static void worker_stack(struct hd_thread *thread, uint64_t bias)
{
    thread->stack.state = HD_STACK_TAKEN;
    thread->stack.frames = calloc(3, sizeof *thread->stack.frames);
    thread->stack.frames[0] = frame(bias + 0x1b64e, "/usr/lib/x86_64-linux-gnu/libgomp.so.1", 0x1b64e, NULL, 0);
    thread->stack.frames[1] = frame(bias + 0x2040, "/opt/app/libwork.so", 0x2040, "work::run(int)", 0x40);
    thread->stack.frames[2] = frame(0x7000, NULL, 0, NULL, 0);
    thread->stack.nframes = 3;
}

static struct hd_snapshot *snapshot_with_stacks(void)
{
    struct hd_snapshot *snapshot = calloc(1, sizeof *snapshot);
    snapshot->nprocesses = 2;
    snapshot->processes = calloc(2, sizeof *snapshot->processes);
    for (size_t p = 0; p < 2; p++) {
        struct hd_process *process = &snapshot->processes[p];
        process->pid = (pid_t)(100 + 100 * p);
        process->stopped_for_s = 0.002;
        process->nthreads = 2;
        process->threads = calloc(2, sizeof *process->threads);
        for (size_t t = 0; t < 2; t++) {
            process->threads[t].tid = process->pid + (pid_t)t;
            strcpy(process->threads[t].name, "worker");
        }
        worker_stack(&process->threads[0], 0x7f0000000000 + p * 0x100000);
    }
    /* one stack with a hostile symbol, one refused */
    struct hd_thread *odd = &snapshot->processes[0].threads[1];
    odd->stack.state = HD_STACK_TAKEN;
    odd->stack.frames = calloc(1, sizeof *odd->stack.frames);
    odd->stack.frames[0] = frame(0x401000, "/tmp/evil", 0x1000, "bad\x1b[31mname", 0);
    odd->stack.nframes = 1;
    odd->stack.truncated = true;
    odd->stack.why_not = strdup("deeper than the depth cap");
    struct hd_thread *refused = &snapshot->processes[1].threads[1];
    refused->stack.state = HD_STACK_FAILED;
    refused->stack.why_not = strdup("already traced by pid 7 (gdb)");
    return snapshot;
}

static char *render(const struct hd_snapshot *snapshot)
{
    struct report_buffer out = { 0 };
    report_render_stacks(&out, snapshot);
    report_buffer_append(&out, "", 1);
    cr_assert_not(out.failed);
    return out.data;
}

Test(render_stacks, identical_stacks_are_grouped_across_processes)
{
    struct hd_snapshot *snapshot = snapshot_with_stacks();
    char *text = render(snapshot);
    cr_assert(strstr(text, "native stacks (2 processes stopped for 4.0 ms in all, 2.0 ms at most each"), "%s", text);
    cr_assert(strstr(text, "stack 1 · ×2 threads in 2 processes named 'worker': pid/tid 100/100 200/200\n"), "%s", text);
    cr_assert(strstr(text, "    #0  libgomp.so.1+0x1b64e\n"
                           "    #1  work::run(int)+0x40 (libwork.so)\n"
                           "    #2  0x7000 (no file mapped there)\n"), "%s", text);
    cr_assert(strstr(text, "stack 2 · ×1 thread named 'worker': process 100, thread 101\n"
                           "    #0  bad\\e[31mname+0x0 (evil)\n"
                           "    … cut short: deeper than the depth cap\n"), "%s", text);
    cr_assert(strstr(text, "stack 3 · ×1 thread named 'worker': process 200, thread 201\n"
                           "    not taken: already traced by pid 7 (gdb)\n"), "%s", text);
    cr_assert_null(strchr(text, '\x1b'), "no raw escape reaches the terminal");
    free(text);
    hd_snapshot_free(snapshot);
}

Test(render_stacks, nothing_when_no_stack_was_attempted)
{
    struct hd_snapshot *snapshot = snapshot_with_stacks();
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        for (size_t t = 0; t < snapshot->processes[p].nthreads; t++)
            hd_stack_release(&snapshot->processes[p].threads[t].stack);
    char *text = render(snapshot);
    cr_assert_str_eq(text, "");
    free(text);
    hd_snapshot_free(snapshot);
}

/* One thread's stack keys as the streaming writer writes them (compact form). */
static char *stack_json(const struct hd_thread *thread)
{
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    cr_assert_not_null(out);
    struct report_json json;
    report_json_start(&json, out, false);
    report_json_begin_object(&json, NULL);
    report_frames_json(&json, "frames", thread);
    report_stack_json(&json, "stack", thread);
    struct report_history history;
    report_fold_samples(thread, &history);
    report_leaf_json(&json, "leaf", &history);
    report_json_end_object(&json);
    cr_assert(report_json_finish(&json));
    fclose(out);
    return text;
}

Test(render_stacks, json_frames_offsets_and_stack_state)
{
    struct hd_snapshot *snapshot = snapshot_with_stacks();
    char *text = stack_json(&snapshot->processes[1].threads[0]);
    const char *expected =
        "{\"frames\":[{\"pc\":\"0x7f000011b64e\",\"module\":\"/usr/lib/x86_64-linux-gnu/libgomp.so.1\","
        "\"symbol\":null,\"offset\":\"0x1b64e\",\"module_offset\":\"0x1b64e\"},"
        "{\"pc\":\"0x7f0000102040\",\"module\":\"/opt/app/libwork.so\",\"symbol\":\"work::run(int)\","
        "\"offset\":\"0x40\",\"module_offset\":\"0x2040\"},"
        "{\"pc\":\"0x7000\",\"module\":null,\"symbol\":null,\"offset\":null,\"module_offset\":null}],"
        "\"stack\":{\"state\":\"taken\",\"truncated\":false,\"why_not\":null},\"leaf\":null}";
    cr_assert_str_eq(text, expected);
    free(text);
    text = stack_json(&snapshot->processes[1].threads[1]);
    cr_assert_str_eq(text, "{\"frames\":[],\"stack\":{\"state\":\"failed\",\"truncated\":false,"
                           "\"why_not\":\"already traced by pid 7 (gdb)\"},\"leaf\":null}");
    free(text);
    hd_snapshot_free(snapshot);
}

/* The tree's thread lines refer to the section's numbers. */
Test(render_stacks, each_taken_stack_has_the_number_the_section_shows)
{
    struct hd_snapshot *snapshot = snapshot_with_stacks();
    struct report_stack_groups *groups = report_stack_groups_new(snapshot);
    cr_assert_eq(report_stack_group_number(groups, &snapshot->processes[0].threads[0]), 1);
    cr_assert_eq(report_stack_group_number(groups, &snapshot->processes[1].threads[0]), 1);
    cr_assert_eq(report_stack_group_number(groups, &snapshot->processes[0].threads[1]), 2);
    cr_assert_eq(report_stack_group_number(groups, &snapshot->processes[1].threads[1]), 0, "not taken: no number");
    struct report_buffer out = { 0 };
    report_render_stack_groups(&out, snapshot, groups);
    report_buffer_append(&out, "", 1);
    char *whole = render(snapshot);
    cr_assert_str_eq(out.data, whole, "the two-step rendering is the same section");
    free(whole);
    report_buffer_release(&out);
    report_stack_groups_free(groups);
    hd_snapshot_free(snapshot);
}

/* Stacks no process was stopped for (a core's): the section says where they came from, not "0 processes". */
Test(render_stacks, stacks_of_core_files_say_so)
{
    struct hd_snapshot *snapshot = snapshot_with_stacks();
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        snapshot->processes[p].stopped_for_s = 0;
    char *text = render(snapshot);
    cr_assert(strstr(text, "native stacks (from the registers and memory the core files kept; identical stacks "
                           "shown once):\n"), "%s", text);
    free(text);
    hd_snapshot_free(snapshot);
}
