/* PID namespaces (issue 17): scenarios run inside `unshare --pid --fork --mount-proc`, as a container runtime starts
 * them, and diagnosed from the host and from inside the namespace (nsenter, as a sidecar that shares it): the same
 * verdicts and subjects as without the namespace, with the ids of each side. Inside, a lock records its owner by
 * the namespace's tid (2, 3...): compared with the host's it named the host's kthreadd. */
#include "harness.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(namespaces, .fini = fixture_stop_all, .timeout = 120);

struct contained {
    struct fixture fixture; /* leader: unshare, in its own process group with everything below it */
    pid_t root;             /* the namespace's init (pid 1 there), on the host */
    pid_t inside[HARNESS_MAX_PIDS]; /* the pids the ready line gave: the namespace's */
    pid_t host[HARNESS_MAX_PIDS];   /* the host's ids of the same tasks */
};

static pid_t first_child(pid_t pid)
{
    char path[64], text[256];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    FILE *file = fopen(path, "r");
    int child = 0;
    if (file) {
        if (!fgets(text, sizeof text, file) || sscanf(text, "%d", &child) != 1)
            child = 0;
        fclose(file);
    }
    return child;
}

/* The id in its own namespace of host task `tid` (its NSpid line's last number); 0 when unreadable. */
static pid_t namespace_id(pid_t tid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    FILE *file = fopen(path, "r");
    pid_t id = 0;
    while (file && fgets(line, sizeof line, file))
        if (strncmp(line, "NSpid:", 6) == 0)
            for (char *word = strtok(line + 6, " \t\n"); word; word = strtok(NULL, " \t\n"))
                id = (pid_t)atoi(word);
    if (file)
        fclose(file);
    return id;
}

/* Every host task (threads too) below `pid`, its own included: the one whose namespace id is `id`; 0 when none. */
static pid_t host_task(pid_t pid, pid_t id, unsigned depth)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    pid_t found = 0;
    for (struct dirent *entry; tasks && !found && (entry = readdir(tasks));)
        if (entry->d_name[0] != '.' && namespace_id((pid_t)atoi(entry->d_name)) == id)
            found = (pid_t)atoi(entry->d_name);
    if (tasks)
        closedir(tasks);
    if (found || depth > 8)
        return found;
    char children_path[96], text[1024];
    snprintf(children_path, sizeof children_path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    FILE *children = fopen(children_path, "r");
    if (children && fgets(text, sizeof text, children))
        for (char *word = strtok(text, " \n"); word && !found; word = strtok(NULL, " \n"))
            found = host_task((pid_t)atoi(word), id, depth + 1);
    if (children)
        fclose(children);
    return found;
}

/* `argv` run by `unshare --pid --fork --mount-proc` (a private mount namespace too): its ready line's pids are the
 * namespace's, translated to the host's into c->host. */
static void start_contained_command(struct contained *c, const char *const *argv)
{
    *c = (struct contained){ 0 };
    const char *command[16] = { "unshare", "--pid", "--fork", "--mount-proc" };
    size_t words = 4;
    for (size_t i = 0; argv[i] && words < 15; i++)
        command[words++] = argv[i];
    command[words] = NULL;
    fixture_start_command(&c->fixture, "/usr/bin/unshare", command, 10000);
    /* the ready line's pids are the namespace's: never let them be killed as the host's */
    pid_t ids[HARNESS_MAX_PIDS];
    size_t count = c->fixture.npids;
    memcpy(ids, c->fixture.pids, sizeof ids);
    c->fixture.npids = 0;
    c->root = first_child(c->fixture.leader);
    cr_assert_gt(c->root, 0, "unshare started the namespace's init");
    cr_assert_eq(namespace_id(c->root), 1, "it is pid 1 there");
    for (size_t i = 0; i < count; i++) {
        c->inside[i] = ids[i];
        c->host[i] = host_task(c->root, ids[i], 0);
        cr_assert_gt(c->host[i], 0, "namespace id %d has a host id", (int)ids[i]);
        c->fixture.pids[c->fixture.npids++] = c->host[i];
    }
}

static void start_contained(struct contained *c, const char *name)
{
    start_contained_command(c, (const char *[]){ fixture_path(name), NULL });
}

static json_object *parse(struct run_result *result, int expected_status)
{
    json_object *document = json_tokener_parse(result->out);
    cr_assert_not_null(document, "hangdoc printed JSON (exit %d): %s", result->exit_status, result->err);
    cr_assert_eq(result->exit_status, expected_status, "exit %d, expected %d: %s", result->exit_status,
                 expected_status, json_object_to_json_string(json_at(document, "findings")));
    json_validate(result->out);
    return document;
}

static json_object *from_the_host(pid_t root, int expected_status)
{
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)root);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--json", "-n", "3", "-i", "100ms", pid_text, NULL });
    json_object *document = parse(&result, expected_status);
    run_result_free(&result);
    return document;
}

/* hangdoc inside the namespace (its PID and mount namespaces: its own /proc), on the namespace's pid 1. */
static json_object *from_inside(pid_t root, int expected_status)
{
    char target[16];
    snprintf(target, sizeof target, "%d", (int)root);
    struct run_result result;
    program_run_as(&result, -1, (const char *[]){ "/usr/bin/nsenter", "-t", target, "-p", "-m",
                                                  getenv("HANGDOC_BIN"), "--json", "-n", "3", "-i", "100ms", "1",
                                                  NULL });
    json_object *document = parse(&result, expected_status);
    run_result_free(&result);
    cr_assert_not(json_bool_at(document, "snapshot.pid_namespace.initial"), "hangdoc says it runs in a namespace");
    return document;
}

/* The child waits on a mutex its parent's thread held at fork(): inherited-lock, whose owner is the holder on
 * either side; not abandoned-lock about the host's thread of the same number. */
Test(namespaces, an_inherited_mutex_in_a_container_is_inherited_lock_from_the_host_and_from_inside)
{
    struct contained c;
    start_contained(&c, "inherited_mutex");
    pid_t parent = c.host[0], holder = c.host[1], child = c.host[2];
    json_object *document = from_the_host(c.root, EXIT_HANG_FORK_UNSAFE);
    json_object *inherited = json_only_finding(document, "inherited-lock", 0);
    cr_assert_eq(json_int_at(inherited, "tid", -1), child);
    char text[128];
    snprintf(text, sizeof text, "%d", (int)holder);
    cr_assert_str_eq(json_string_at(inherited, "evidence.owner_tid"), text);
    snprintf(text, sizeof text, "the lock records tid %d, its id in the target's PID namespace; %d in this one",
             (int)c.inside[1], (int)holder);
    cr_assert_str_eq(json_string_at(inherited, "evidence.owner_in_namespace"), text);
    cr_assert_eq(json_count_findings(document, "abandoned-lock", 0), 0);
    json_object *locker = json_thread(json_process(document, child), child);
    cr_assert_eq(json_int_at(locker, "wait.owner_tid", -1), holder);
    cr_assert_eq(json_int_at(locker, "wait.owner_ns_tid", -1), c.inside[1]);
    cr_assert_eq(json_int_at(locker, "ns_tid", -1), c.inside[2]);
    cr_assert_eq(json_int_at(json_process(document, parent), "pid_namespace.pid", -1), 1);
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "inherited-lock");
    json_object_put(document);

    document = from_inside(c.root, EXIT_HANG_FORK_UNSAFE);
    inherited = json_only_finding(document, "inherited-lock", 0);
    cr_assert_eq(json_int_at(inherited, "tid", -1), c.inside[2], "the namespace's ids inside");
    snprintf(text, sizeof text, "%d", (int)c.inside[1]);
    cr_assert_str_eq(json_string_at(inherited, "evidence.owner_tid"), text);
    cr_assert_null(json_at(inherited, "evidence.owner_in_namespace"), "nothing to translate inside");
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "inherited-lock");
    json_object_put(document);
    fixture_stop(&c.fixture);
}

/* Two threads each holding the mutex the other wants: lock-cycle, with both threads, on either side. */
Test(namespaces, a_lock_cycle_in_a_container_is_found_from_the_host_and_from_inside)
{
    struct contained c;
    start_contained(&c, "lock_cycle");
    json_object *document = from_the_host(c.root, EXIT_HANG);
    json_object *cycle = json_only_finding(document, "lock-cycle", 0);
    json_object *members = json_at(cycle, "members");
    cr_assert_eq(json_object_array_length(members), 2);
    for (size_t m = 0; m < 2; m++) {
        pid_t tid = (pid_t)json_int_at(json_object_array_get_idx(members, m), "tid", -1);
        cr_assert(tid == c.host[1] || tid == c.host[2], "member %d is one of the two host threads", (int)tid);
    }
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "lock-cycle");
    json_object_put(document);
    document = from_inside(c.root, EXIT_HANG);
    json_only_finding(document, "lock-cycle", 0);
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "lock-cycle");
    json_object_put(document);
    fixture_stop(&c.fixture);
}

/* GNU OpenMP's pool copied by fork() without its threads: orphaned-wait about the child, on either side. */
Test(namespaces, libgomp_after_fork_in_a_container_is_orphaned_wait_from_the_host_and_from_inside)
{
    if (access(fixture_path("openmp_fork"), X_OK) != 0)
        cr_skip_test("the openmp_fork fixture was not built (no OpenMP in this compiler)");
    struct contained c;
    start_contained(&c, "openmp_fork");
    json_object *document = from_the_host(c.root, EXIT_HANG_FORK_UNSAFE);
    json_object *orphaned = json_only_finding(document, "orphaned-wait", 0);
    cr_assert_eq(json_int_at(orphaned, "tid", -1), c.host[1]);
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "fork-inheritance");
    json_object_put(document);
    document = from_inside(c.root, EXIT_HANG_FORK_UNSAFE);
    orphaned = json_only_finding(document, "orphaned-wait", 0);
    cr_assert_eq(json_int_at(orphaned, "tid", -1), c.inside[1], "the child by its id inside");
    json_object_put(document);
    fixture_stop(&c.fixture);
}

/* The path of the libc this process maps (the one the fixtures map too), into `path`. */
static void own_libc(char *path, size_t size)
{
    FILE *maps = fopen("/proc/self/maps", "re");
    cr_assert_not_null(maps);
    char line[4096];
    path[0] = '\0';
    while (!path[0] && fgets(line, sizeof line, maps)) {
        char *name = strchr(line, '/');
        if (name && strstr(name, "/libc.so.6\n"))
            snprintf(path, size, "%.*s", (int)strcspn(name, "\n"), name);
    }
    fclose(maps);
    cr_assert(path[0], "this process maps a libc.so.6");
}

static bool frames_name(json_object *thread, const char *symbol)
{
    json_object *frames = json_at(thread, "frames");
    for (size_t f = 0; frames && f < json_object_array_length(frames); f++) {
        const char *name = json_string_at(json_object_array_get_idx(frames, f), "symbol");
        if (name && strstr(name, symbol))
            return true;
    }
    return false;
}

/* A container whose libc lies at a path the host does not have (a tmpfs mounted in its own mount namespace over an
 * empty directory of the host's): the libc is still identified and its symbols read, through /proc/<pid>/root, and
 * the verdict is the one without namespaces, from the host and from inside. */
Test(namespaces, a_container_libc_at_a_path_the_host_lacks_is_read_through_the_target_root)
{
    char libc[4096], directory[256], script[512];
    own_libc(libc, sizeof libc);
    const char *scratch = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(directory, sizeof directory, "%s/hangdoc-libc-XXXXXX", scratch);
    cr_assert_not_null(mkdtemp(directory));
    snprintf(script, sizeof script,
             "mount -t tmpfs hangdoc-libc \"$1\" && cp \"$2\" \"$1\"/ && LD_LIBRARY_PATH=\"$1\" exec \"$3\"");
    struct contained c;
    start_contained_command(&c, (const char *[]){ "/bin/sh", "-c", script, "sh", directory, libc,
                                                  fixture_path("inherited_mutex"), NULL });
    char moved[320];
    snprintf(moved, sizeof moved, "%s/libc.so.6", directory);
    cr_assert_neq(access(moved, F_OK), 0, "the host does not see the container's libc at %s", moved);
    pid_t child = c.host[2];
    json_object *document = from_the_host(c.root, EXIT_HANG_FORK_UNSAFE);
    json_object *inherited = json_only_finding(document, "inherited-lock", 0);
    cr_assert_eq(json_int_at(inherited, "tid", -1), child);
    json_object *process = json_process(document, child);
    json_object *libraries = json_at(process, "libraries");
    json_object *found = NULL;
    for (size_t i = 0; libraries && i < json_object_array_length(libraries); i++) {
        const char *path = json_string_at(json_object_array_get_idx(libraries, i), "path");
        if (path && strcmp(path, moved) == 0)
            found = json_object_array_get_idx(libraries, i);
    }
    cr_assert_not_null(found, "the container's libc at %s is listed", moved);
    cr_assert_str_eq(json_string_at(found, "soname"), "libc.so.6");
    cr_assert_str_eq(json_string_at(found, "class"), "glibc");
    cr_assert(frames_name(json_thread(process, child), "pthread_mutex_lock"),
              "libc's symbols read from the container's file: %s",
              json_object_to_json_string(json_at(json_thread(process, child), "frames")));
    json_object_put(document);

    document = from_inside(c.root, EXIT_HANG_FORK_UNSAFE);
    inherited = json_only_finding(document, "inherited-lock", 0);
    cr_assert_eq(json_int_at(inherited, "tid", -1), c.inside[2]);
    json_object_put(document);
    fixture_stop(&c.fixture);
    rmdir(directory);
}
