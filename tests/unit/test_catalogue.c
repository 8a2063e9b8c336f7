/* The runtime catalogue (analysis/catalogue.h), the inheritance probes (probe/inherit.h, probe/libraries.h: fd
 * classes, unix socket names from sock_diag's table) and the inheritance rules (analysis/inheritance.h) over
 * hand-built snapshots (snapshot_builder.h). */
#include "fds.h"
#include "inherit.h"
#include "libraries.h"
#include "analysis.h"
#include "catalogue.h"
#include "inheritance.h"
#include "report.h"
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the catalogue ------------------------------------------------------------------------------------------------ */

static struct hd_library library_named(const char *path, const char *soname)
{
    return (struct hd_library){ .path = (char *)path, .soname = (char *)soname };
}

static const char *library_class(const struct report_catalogue *catalogue, const char *path, const char *soname)
{
    struct hd_library library = library_named(path, soname);
    const struct report_runtime *runtime = report_catalogue_library(catalogue, &library);
    return runtime ? runtime->id : NULL;
}

Test(catalogue, built_in_rows_classify_libraries_by_soname_file_name_and_path)
{
    const struct report_catalogue *catalogue = report_catalogue_builtin();
    cr_assert_not_null(catalogue);
    cr_assert_str_eq(library_class(catalogue, "/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0", "libgomp.so.1"),
                     "gnu-openmp");
    cr_assert_str_eq(library_class(catalogue, "/usr/lib/libcuda.so.535.54.03", "libcuda.so.1"), "cuda");
    cr_assert_str_eq(library_class(catalogue, "/opt/x/libnvidia-ml.so.1", NULL), "cuda", "by file name");
    cr_assert_str_eq(library_class(catalogue, "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3",
                                   "libblas.so.3"), "openblas", "by path");
    cr_assert_null(library_class(catalogue, "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3", "libblas.so.3"),
                   "reference BLAS has no threads");
    cr_assert_str_eq(library_class(catalogue, "/usr/lib/libQt5Core.so.5.15.8", "libQt5Core.so.5"), "qt");
    cr_assert_null(library_class(catalogue, "/usr/lib/libz.so.1.2.13", "libz.so.1"));
    cr_assert_eq(report_catalogue_find(catalogue, "llvm-openmp")->safety, REPORT_FORK_AWARE);
    cr_assert_eq(report_catalogue_find(catalogue, "gnu-openmp")->safety, REPORT_FORK_UNSAFE);
    cr_assert_eq(report_catalogue_find(catalogue, "opencv")->safety, REPORT_FORK_DEPENDS);
    for (size_t i = 0; i < catalogue->nrows; i++)
        cr_assert(catalogue->rows[i].reason[0], "row %s has a reason", catalogue->rows[i].id);
}

Test(catalogue, threads_and_handles)
{
    const struct report_catalogue *catalogue = report_catalogue_builtin();
    cr_assert_str_eq(report_catalogue_thread(catalogue, "cuda-EvtHandlr")->id, "cuda");
    cr_assert_str_eq(report_catalogue_thread(catalogue, "gmain")->id, "glib");
    cr_assert_str_eq(report_catalogue_thread(catalogue, "QThread")->id, "qt");
    cr_assert_null(report_catalogue_thread(catalogue, "python3"));
    struct hd_fd nvidia = { .target = (char *)"/dev/nvidiactl", .fd_class = HD_FD_CLASS_NVIDIA };
    cr_assert_str_eq(report_catalogue_handle(catalogue, &nvidia)->id, "cuda");
    struct hd_fd renamed = { .target = (char *)"/dev/gpu0", .fd_class = HD_FD_CLASS_NVIDIA };
    cr_assert_str_eq(report_catalogue_handle(catalogue, &renamed)->id, "cuda", "by class: character major 195");
    struct hd_fd x11 = { .target = (char *)"socket:[123]", .fd_class = HD_FD_CLASS_X11 };
    cr_assert_str_eq(report_catalogue_handle(catalogue, &x11)->id, "x11");
    struct hd_fd file = { .target = (char *)"/tmp/data.bin", .fd_class = HD_FD_CLASS_FILE };
    cr_assert_null(report_catalogue_handle(catalogue, &file));
    struct hd_fd hdf5 = { .target = (char *)"/data/train.h5", .fd_class = HD_FD_CLASS_FILE };
    cr_assert_str_eq(report_catalogue_handle(catalogue, &hdf5)->id, "hdf5");
    struct hd_fd removed = { .target = (char *)"/tmp/train.h5 (deleted)", .fd_class = HD_FD_CLASS_FILE };
    cr_assert_str_eq(report_catalogue_handle(catalogue, &removed)->id, "hdf5", "a removed file is still the file");
    struct hd_fd only_suffix = { .target = (char *)" (deleted)", .fd_class = HD_FD_CLASS_FILE };
    cr_assert_null(report_catalogue_handle(catalogue, &only_suffix));
    /* h5py's extension modules by their path: their names are the generic _objects.cpython-*.so */
    struct hd_library h5py = { .path = (char *)"/usr/lib/python3/dist-packages/h5py/_debian_h5py_serial/"
                                                "_objects.cpython-311-x86_64-linux-gnu.so" };
    cr_assert_str_eq(report_catalogue_library(catalogue, &h5py)->id, "hdf5");
}

Test(catalogue, a_file_extends_rows_and_adds_new_ones)
{
    struct report_catalogue *catalogue = report_catalogue_new();
    cr_assert_not_null(catalogue);
    size_t rows = catalogue->nrows;
    char error[128] = "";
    const char *text = "# comment\n"
                       "[cuda]\n"
                       "handles = */fake-nvidia-*\n"
                       "\n"
                       "[acme]\n"
                       "name = ACME runtime\n"
                       "libraries = libacme.so* \n"
                       "threads = acme-*\n"
                       "safety = depends\n"
                       "reason = it depends\n"
                       "remedy = ACME_THREADS=1\n"
                       "remedy = or spawn\n";
    cr_assert_eq(report_catalogue_parse(catalogue, text, error, sizeof error), 0, "%s", error);
    cr_assert_eq(catalogue->nrows, rows + 1);
    struct hd_fd fake = { .target = (char *)"/tmp/fake-nvidia-12 (deleted)", .fd_class = HD_FD_CLASS_FILE };
    cr_assert_str_eq(report_catalogue_handle(catalogue, &fake)->id, "cuda");
    struct hd_fd real = { .target = (char *)"/dev/nvidia0", .fd_class = HD_FD_CLASS_NVIDIA };
    cr_assert_str_eq(report_catalogue_handle(catalogue, &real)->id, "cuda", "the built-in patterns stay");
    const struct report_runtime *acme = report_catalogue_find(catalogue, "acme");
    cr_assert_str_eq(acme->name, "ACME runtime");
    cr_assert_eq(acme->safety, REPORT_FORK_DEPENDS);
    cr_assert_eq(acme->nremedies, 2);
    cr_assert_str_eq(acme->remedies[1], "or spawn");
    cr_assert_str_eq(library_class(catalogue, "/opt/libacme.so.2", NULL), "acme");
    cr_assert_str_eq(report_catalogue_thread(catalogue, "acme-io")->id, "acme");
    report_catalogue_free(catalogue);
}

Test(catalogue, errors_name_the_line)
{
    static const struct {
        const char *text;
        int line;
        const char *says;
    } cases[] = {
        { "libraries = x\n", 1, "before the first [id]" },
        { "[cuda]\nhandels = x\n", 2, "unknown key" },
        { "[cuda]\nsafety = maybe\n", 2, "safety is one of" },
        { "[bad id]\n", 1, "an id is" },
        { "[cuda\n", 1, "a section is [id]" },
        { "[cuda]\njust words\n", 2, "expected [id] or key = value" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct report_catalogue *catalogue = report_catalogue_new();
        char error[128] = "";
        cr_assert_eq(report_catalogue_parse(catalogue, cases[i].text, error, sizeof error), cases[i].line,
                     "case %zu: %s", i, error);
        cr_assert(strstr(error, cases[i].says), "case %zu: %s", i, error);
        report_catalogue_free(catalogue);
    }
}

/* ---- the probe's parsers --------------------------------------------------------------------------------------------- */

Test(probe_inherit, fd_classes_from_targets)
{
    static const struct {
        const char *target;
        enum hd_fd_class fd_class;
    } cases[] = {
        { "/dev/nvidia0", HD_FD_CLASS_NVIDIA },         { "/dev/nvidiactl", HD_FD_CLASS_NVIDIA },
        { "/dev/nvidia-uvm", HD_FD_CLASS_NVIDIA_UVM },  { "/dev/dri/renderD128", HD_FD_CLASS_DRI },
        { "/dev/shm/torch_1_2", HD_FD_CLASS_SHM },      { "/memfd:pulse (deleted)", HD_FD_CLASS_MEMFD },
        { "/dev/null", HD_FD_CLASS_DEVICE },            { "/home/u/data.h5", HD_FD_CLASS_FILE },
        { "pipe:[4026]", HD_FD_CLASS_PIPE },            { "socket:[77]", HD_FD_CLASS_SOCKET },
        { "anon_inode:[eventfd]", HD_FD_CLASS_EVENTFD }, { "anon_inode:[eventpoll]", HD_FD_CLASS_ANON },
        { "anon_inode:inotify", HD_FD_CLASS_ANON },     { "net:[4026531840]", HD_FD_CLASS_OTHER },
        { "", HD_FD_CLASS_OTHER },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_assert_eq(probe_fd_class_of_target(cases[i].target), cases[i].fd_class, "%s: %s", cases[i].target,
                     hd_fd_class_name(probe_fd_class_of_target(cases[i].target)));
    cr_assert_eq(probe_fd_class_of_target(NULL), HD_FD_CLASS_OTHER);
}

Test(probe_inherit, unix_socket_names)
{
    cr_assert_eq(probe_unix_socket_class("/tmp/.X11-unix/X0"), HD_FD_CLASS_X11);
    cr_assert_eq(probe_unix_socket_class("@/tmp/.X11-unix/X1"), HD_FD_CLASS_X11);
    cr_assert_eq(probe_unix_socket_class("/run/user/1000/wayland-0"), HD_FD_CLASS_WAYLAND);
    cr_assert_eq(probe_unix_socket_class("/run/dbus/system_bus_socket"), HD_FD_CLASS_DBUS);
    cr_assert_eq(probe_unix_socket_class("/run/user/1000/bus"), HD_FD_CLASS_DBUS);
    cr_assert_eq(probe_unix_socket_class("@/tmp/dbus-Xa1b2"), HD_FD_CLASS_DBUS);
    cr_assert_eq(probe_unix_socket_class("/var/run/docker.sock"), HD_FD_CLASS_UNIX_SOCKET);
    cr_assert_eq(probe_unix_socket_class(NULL), HD_FD_CLASS_UNIX_SOCKET);
}

/* argv strings are writable in a process; string literals are not */
#define S(text) ((char *)(text))

/* The class of a unix socket comes from its own name in sock_diag's table, or, unnamed, from its peer's (the
 * client's end of an X11 connection is X11); a socket the table lacks is no unix socket (TCP) and keeps its class. */
Test(probe_inherit, unix_sockets_are_named_from_sock_diag)
{
    struct probe_unix_socket sockets[] = { /* sorted by inode, as probe_read_unix_sockets() leaves them */
        { .inode = 10, .peer_inode = 11, .name = S("@/tmp/.X11-unix/X0") }, /* the server's accepted end */
        { .inode = 11, .peer_inode = 10 },                                  /* the client's */
        { .inode = 12, .name = S("/run/user/1000/bus") },
        { .inode = 13 },                                                    /* neither bound nor connected */
    };
    const struct probe_unix_socket_table table = { .sockets = sockets, .count = 4, .capacity = 4 };
    static const struct {
        uint64_t inode;
        enum hd_fd_class fd_class;
        const char *name;
    } expected[] = {
        { 10, HD_FD_CLASS_X11, "@/tmp/.X11-unix/X0" }, { 11, HD_FD_CLASS_X11, "@/tmp/.X11-unix/X0" },
        { 12, HD_FD_CLASS_DBUS, "/run/user/1000/bus" }, { 13, HD_FD_CLASS_UNIX_SOCKET, NULL },
        { 14, HD_FD_CLASS_SOCKET, NULL },
    };
    struct hd_snapshot *snapshot = new_snapshot(getpid());
    struct hd_process *process = add_process(snapshot, getpid(), getppid(), HD_ORIGIN_EXEC, 1);
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        add_fd(process, 20 + (int)i, HD_FD_SOCKET, expected[i].inode, 2);
    probe_classify_fds(snapshot, &table);
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        const struct hd_fd *fd = &process->fds[i];
        cr_assert_eq(fd->fd_class, expected[i].fd_class, "socket %d: %s", (int)fd->inode,
                     hd_fd_class_name(fd->fd_class));
        if (expected[i].name)
            cr_assert_str_eq(fd->socket_name, expected[i].name, "socket %d", (int)fd->inode);
        else
            cr_assert_null(fd->socket_name, "socket %d", (int)fd->inode);
    }
    cr_assert_eq(snapshot->nnotes, 0u, "this process is in hangdoc's network namespace: nothing to note");
    hd_snapshot_free(snapshot);
}

/* sock_diag answers for hangdoc's network namespace alone: a process in another one has sockets it cannot list,
 * and the report says so. */
Test(probe_inherit, a_process_in_another_network_namespace_is_noted)
{
    int ready[2];
    cr_assert_eq(pipe(ready), 0);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        char answer = unshare(CLONE_NEWNET) == 0 || unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 ? 'y' : 'n';
        if (write(ready[1], &answer, 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    char answer = 'n';
    cr_assert_eq(read(ready[0], &answer, 1), 1);
    if (answer != 'y') {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        cr_skip_test("unshare(CLONE_NEWNET) refused here: no network namespace of its own");
    }
    struct hd_snapshot *snapshot = new_snapshot(child);
    add_fd(add_process(snapshot, child, getpid(), HD_ORIGIN_FORKED, 1), 3, HD_FD_SOCKET, 77, 2);
    const struct probe_unix_socket_table empty = { 0 };
    probe_classify_fds(snapshot, &empty);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    cr_assert_eq(snapshot->nnotes, 1u);
    cr_assert_eq(snapshot->notes[0].kind, HD_NOTE_SOCKETS);
    cr_assert_eq(snapshot->notes[0].pid, child);
    cr_assert(strstr(snapshot->notes[0].text, "1 process in another network namespace than hangdoc's"), "%s",
              snapshot->notes[0].text);
    cr_assert_eq(snapshot->processes[0].fds[0].fd_class, HD_FD_CLASS_SOCKET, "unknown: not called a unix socket");
    hd_snapshot_free(snapshot);
}

Test(probe_inherit, python_roles_from_command_lines)
{
    char *spawn[] = { S("/usr/bin/python3"), S("-c"),
                      S("from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7)"),
                      S("--multiprocessing-fork") };
    cr_assert_eq(probe_python_role_of_cmdline(spawn, 4), HD_PYTHON_ROLE_SPAWN_CHILD);
    char *forkserver[] = { S("python3"), S("-c"), S("from multiprocessing.forkserver import main; main(8, 9, ['__main__'])") };
    cr_assert_eq(probe_python_role_of_cmdline(forkserver, 3), HD_PYTHON_ROLE_FORKSERVER);
    char *tracker[] = { S("python3"), S("-c"), S("from multiprocessing.resource_tracker import main;main(4)") };
    cr_assert_eq(probe_python_role_of_cmdline(tracker, 3), HD_PYTHON_ROLE_RESOURCE_TRACKER);
    char *script[] = { S("python3"), S("train.py"), S("-c"), S("config.yaml") };
    cr_assert_eq(probe_python_role_of_cmdline(script, 4), HD_PYTHON_ROLE_NONE);
    char *dangling[] = { S("python3"), S("-c") };
    cr_assert_eq(probe_python_role_of_cmdline(dangling, 2), HD_PYTHON_ROLE_NONE);
}

Test(probe_inherit, elf_identity_of_a_real_file_and_of_text)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    cr_assert_geq(fd, 0);
    char *soname, *build_id;
    cr_assert(probe_read_elf_identity(fd, &soname, &build_id));
    cr_assert_null(soname, "an executable has no soname");
    cr_assert_not_null(build_id, "gcc links with --build-id");
    cr_assert_geq(strlen(build_id), 16);
    free(build_id);
    close(fd);
    char path[] = "/tmp/hangdoc-not-elf-XXXXXX";
    fd = mkstemp(path);
    cr_assert_eq(write(fd, "\x7f" "ELF but not really", 19), 19);
    unlink(path);
    cr_assert_not(probe_read_elf_identity(fd, &soname, &build_id));
    cr_assert_null(soname);
    cr_assert_null(build_id);
    close(fd);
}

/* ---- the rules ------------------------------------------------------------------------------------------------------- */

#define DRIVER_DATA 0x7f0000201000ull

/* A process of the CUDA tree, its threads running: the driver mapped (code, then its data, file-backed, as ld.so maps
 * it) and /dev/nvidiactl open as fd 9, which a child got from its parent (kcmp said so). */
static struct hd_process *cuda_process(struct hd_snapshot *snapshot, pid_t pid, pid_t ppid, enum hd_origin origin,
                                       size_t nthreads)
{
    struct hd_process *process = add_process(snapshot, pid, ppid, origin, nthreads);
    for (size_t t = 0; t < nthreads; t++)
        ran(snapshot, &process->threads[t], 3000000, 4, 1);
    struct hd_library *driver = add_library(process, 0x7f0000000000ull, 0x7f0000202000ull, "/usr/lib/libcuda.so.535.1",
                                            "libcuda.so.1");
    driver->inode = 42;
    driver->in_parent = ppid != 1;
    add_mapping(process, 0x7f0000200000ull, 0x7f0000202000ull, "rw-p", "/usr/lib/libcuda.so.535.1")->inode = 42;
    struct hd_fd *handle = add_file(process, 9, "/dev/nvidiactl", HD_FD_CLASS_NVIDIA);
    handle->inherited_checked = ppid != 1;
    if (ppid != 1)
        handle->inherited_from = (struct hd_fd_origin){ .pid = ppid, .fd = 9 };
    return process;
}

/* Parent 100 with its cuda-EvtHandlr thread 101 in a timed wait; child 200 forked from it, its thread either
 * asleep for ever on the driver's mutex (owned by 101) or running. */
static struct hd_snapshot *cuda_tree(bool child_stuck)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    cuda_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 2);
    cuda_process(snapshot, 200, 100, HD_ORIGIN_FORKED, 1);
    snprintf(thread_of(snapshot, 101)->name, HD_COMM_MAX, "cuda-EvtHandlr");
    if (child_stuck)
        waiting_on_mutex(thread_of(snapshot, 200), DRIVER_DATA, 101, 100, HD_OWNER_OTHER_PROCESS,
                         HD_MAPPING_FILE_PRIVATE);
    return snapshot;
}

Test(inheritance_rules, stuck_child_of_a_cuda_parent)
{
    struct hd_snapshot *snapshot = cuda_tree(true);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *lock = first_finding(analysis, "inherited-lock");
    cr_assert_not_null(lock);
    cr_assert_str_eq(evidence_of(lock, "runtime"), "cuda");
    cr_assert_str_eq(evidence_of(lock, "runtime_text"), "inside libcuda.so.1, NVIDIA CUDA, not fork-safe");
    cr_assert_str_eq(evidence_of(lock, "attributed_by"), "the memory its futex lies in");
    cr_assert(strstr(evidence_of(lock, "parent_thread"), "thread 101 'cuda-EvtHandlr'"));
    cr_assert(strstr(evidence_of(lock, "inherited_handle"), "fd 9 /dev/nvidiactl (nvidia) is fd 9 of parent 100"));
    const struct report_finding *runtime = first_finding(analysis, "fork-unsafe-runtime");
    cr_assert_not_null(runtime);
    cr_assert_eq(runtime->tid, 200);
    const struct report_finding *cuda = first_finding(analysis, "cuda-inherited");
    cr_assert_not_null(cuda);
    cr_assert_eq(cuda->pid, 200);
    cr_assert_str_eq(analysis->findings[analysis->verdict.root_cause].id, "inherited-lock");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(inheritance_rules, a_healthy_child_that_merely_inherited_cuda_gets_no_finding)
{
    struct hd_snapshot *snapshot = cuda_tree(false);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_null(first_finding(analysis, "fork-unsafe-runtime"));
    cr_assert_null(first_finding(analysis, "cuda-inherited"));
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(inheritance_rules, a_fork_aware_runtime_is_named_but_not_blamed)
{
    /* the same tree with LLVM's libomp in place of the driver: the child waits in its code (the system call is
     * made there), on a futex without owner */
    struct hd_snapshot *snapshot = cuda_tree(false);
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_library *library = &snapshot->processes[p].libraries[0];
        free(library->soname);
        free(library->path);
        library->soname = strdup("libomp.so.5");
        library->path = strdup("/usr/lib/llvm-14/lib/libomp.so.5");
    }
    snprintf(thread_of(snapshot, 101)->name, HD_COMM_MAX, "omp-pool");
    struct hd_thread *worker = thread_of(snapshot, 200);
    asleep_in_futex(worker, 0x5000);
    worker->syscall.program_counter = 0x7f0000001234ull;
    add_futex_memory(process_of(snapshot, 100), 0x5000); /* the parent maps it at the same place: it came by fork() */
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *orphaned = first_finding(analysis, "orphaned-wait");
    cr_assert_not_null(orphaned);
    cr_assert_str_eq(evidence_of(orphaned, "runtime"), "llvm-openmp");
    cr_assert_str_eq(evidence_of(orphaned, "runtime_text"), "inside libomp.so.5, LLVM OpenMP, fork-aware");
    cr_assert_str_eq(evidence_of(orphaned, "attributed_by"), "the code that made its system call");
    cr_assert_null(first_finding(analysis, "fork-unsafe-runtime"), "fork-aware: not blamed");
    cr_assert_null(first_finding(analysis, "cuda-inherited"));
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(inheritance_rules, data_right_after_a_library_is_its_bss)
{
    struct hd_process process = { 0 };
    struct hd_library library = { .path = (char *)"/usr/lib/libc.so.6", .soname = (char *)"libc.so.6",
                                  .start = 0x1000, .end = 0x5000 };
    struct hd_mapping mappings[] = {
        { .start = 0x1000, .end = 0x4000, .path = (char *)"/usr/lib/libc.so.6" },
        { .start = 0x4000, .end = 0x5000, .path = (char *)"/usr/lib/libc.so.6" },
        { .start = 0x5000, .end = 0x6000 },                     /* its .bss */
        { .start = 0x8000, .end = 0x9000 },                     /* some other anonymous memory */
    };
    process.libraries = &library;
    process.nlibraries = 1;
    process.mappings = mappings;
    process.nmappings = 4;
    cr_assert_eq(hd_process_library_of_data(&process, 0x4800), &library);
    cr_assert_eq(hd_process_library_of_data(&process, 0x5010), &library, "the anonymous mapping right after it");
    cr_assert_null(hd_process_library_of_data(&process, 0x8010));
    cr_assert_null(hd_process_library_of_data(&process, 0x7000), "no mapping there");
}

/* Which of libc's locks a futex in libc's data is, by the functions of the waiter's innermost run of frames in libc
 * (any name a frame has: an exported one without libc6-dbg, an internal one with it); none named: libc's generic
 * row, with the outermost named frame of that run (the program's call into libc), never one further out. */
Test(inheritance_rules, libc_locks_are_named_by_the_functions_that_take_them)
{
    struct hd_library libraries[] = {
        { .path = (char *)"/usr/lib/libc.so.6", .soname = (char *)"libc.so.6", .start = 0x1000, .end = 0x5000 },
        { .path = (char *)"/opt/app/prog", .start = 0x9000, .end = 0xa000 },
    };
    struct hd_mapping mappings[] = {
        { .start = 0x1000, .end = 0x4000, .path = (char *)"/usr/lib/libc.so.6" },
        { .start = 0x4000, .end = 0x5000, .permissions = "rw-p", .path = (char *)"/usr/lib/libc.so.6" },
        { .start = 0x9000, .end = 0xa000, .path = (char *)"/opt/app/prog" },
    };
    struct hd_process process = { .pid = 7, .libraries = libraries, .nlibraries = 2, .mappings = mappings,
                                  .nmappings = 3 };
    static const struct {
        const char *symbols[4]; /* innermost first: libc, libc, the program, libc (__libc_start_main) */
        const char *runtime, *function;
    } cases[] = {
        { { "__lll_lock_wait_private", "__tz_convert", "main", "__libc_start_main" }, "glibc-tz", "__tz_convert" },
        { { NULL, "localtime_r", "main", "__libc_start_main" }, "glibc-tz", "localtime_r" },
        { { NULL, "setenv", "main", "__libc_start_main" }, "glibc-env", "setenv" },
        { { NULL, "__internal_atexit", "main", "__libc_start_main" }, "glibc-atexit", "__internal_atexit" },
        { { NULL, "dcgettext", "main", "__libc_start_main" }, "glibc-gettext", "dcgettext" },
        { { NULL, "qsort", "main", "__libc_start_main" }, "glibc", "qsort" },
        { { NULL, NULL, "main", "__libc_start_main" }, "glibc", NULL },
    };
    const struct report_catalogue *catalogue = report_catalogue_builtin();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static const uint64_t pcs[] = { 0x1100, 0x1200, 0x9100, 0x1300 };
        struct hd_frame frames[4];
        for (size_t f = 0; f < 4; f++)
            frames[f] = (struct hd_frame){ .pc = pcs[f], .symbol = (char *)cases[i].symbols[f] };
        struct hd_thread thread = {
            .tid = 7, .state = 'S',
            .syscall = { .state = HD_SYSCALL_IN, .name = "futex", .program_counter = 0x1100 },
            .wait = { .kind = HD_WAIT_FUTEX, .address = 0x4800, .fd = -1 },
            .stack = { .state = HD_STACK_TAKEN, .frames = frames, .nframes = 4 },
        };
        struct report_attribution attribution;
        cr_assert(report_attribute_thread(catalogue, &process, &thread, &attribution), "case %zu", i);
        cr_assert_str_eq(attribution.runtime->id, cases[i].runtime, "case %zu", i);
        cr_assert_str_eq(attribution.library_runtime->id, "glibc", "case %zu", i);
        if (cases[i].function)
            cr_assert_str_eq(attribution.function, cases[i].function, "case %zu", i);
        else
            cr_assert_null(attribution.function, "case %zu: not __libc_start_main, further out", i);
        char name[256];
        report_attribution_name(&attribution, name, sizeof name);
        if (!cases[i].function)
            cr_assert_str_eq(name, "a lock inside glibc", "without a named frame, nothing more");
    }
    /* without a stack: the library's row, nothing more */
    struct hd_thread bare = { .tid = 7, .state = 'S', .syscall = { .state = HD_SYSCALL_IN, .name = "futex" },
                              .wait = { .kind = HD_WAIT_FUTEX, .address = 0x4800, .fd = -1 } };
    struct report_attribution attribution;
    cr_assert(report_attribute_thread(catalogue, &process, &bare, &attribution));
    cr_assert_str_eq(attribution.runtime->id, "glibc");
    cr_assert_null(attribution.function);
}

/* ---- a user's catalogue on output ------------------------------------------------------------------------------ */

/* A --catalogue file is not hangdoc's own text: a name with terminal escapes (here: set the window title, then red)
 * must come out escaped in the text report like any string of a target's, the runtime lines included. */
Test(inheritance_render, a_catalogue_name_with_escapes_is_escaped_in_the_text_report)
{
    char path[] = "/tmp/hangdoc-catalogue-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    static const char file[] = "[cuda]\n"
                               "name = \x1b]0;owned\x07\x1b[31mNVIDIA\n"
                               "reason = \x1b[2Jcleared\n"
                               "remedy = \x1b[8mhidden\n";
    cr_assert_eq(write(fd, file, sizeof file - 1), (ssize_t)(sizeof file - 1));
    close(fd);
    struct report_catalogue *catalogue = report_catalogue_new();
    char error[128] = "";
    cr_assert_eq(report_catalogue_load(catalogue, path, error, sizeof error), 0, "%s", error);
    unlink(path);
    struct hd_snapshot *snapshot = cuda_tree(true);
    finish_snapshot(snapshot);
    struct report_analysis *analysis = report_analyze_with(snapshot, &(struct report_options){ .catalogue = catalogue });
    cr_assert_not_null(analysis);
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    struct report_text_options options = { .verbose = true };
    cr_assert(report_render_text(snapshot, analysis, &options, out));
    fclose(out);
    cr_assert(strstr(text, "runtimes: libcuda.so.1 (\\e]0;owned\\x07\\e[31mNVIDIA, not fork-safe"), "%s", text);
    cr_assert(strstr(text, "(\\e]0;owned\\x07\\e[31mNVIDIA)"), "the runtime threads line: %s", text);
    cr_assert_null(memchr(text, '\x1b', length), "a raw ESC reached the terminal:\n%s", text);
    cr_assert_null(memchr(text, '\x07', length), "a raw BEL reached the terminal:\n%s", text);
    free(text);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
    report_catalogue_free(catalogue);
}
