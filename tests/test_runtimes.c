/* Runtimes other than C on glibc and CPython (issue 41): Rust's std locks, musl linked statically, Node's
 * worker_threads, and idle Go and Java services. Each program is built by Debian's own toolchain (tests/scenarios/
 * meson.build); a test skips when its toolchain was missing where the suite was built. Each hang beside its healthy
 * look-alike, asserted on finding ids, subjects and evidence. */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

TestSuite(runtimes, .fini = fixture_stop_all, .timeout = 180);

#define READY_TIMEOUT_MS 20000 /* a JVM starts in about a second on two cores; node in a fraction */

static size_t member_count(json_object *finding)
{
    json_object *members = json_at(finding, "members");
    return members ? json_object_array_length(members) : 0;
}

/* The evidence values of `name` (a string or an array of them) that contain `part`. */
static size_t evidence_containing(json_object *finding, const char *name, const char *part)
{
    json_object *evidence = json_at(finding, "evidence");
    json_object *value = evidence ? json_at(evidence, name) : NULL;
    if (!value)
        return 0;
    if (json_object_is_type(value, json_type_string))
        return strstr(json_object_get_string(value), part) != NULL;
    size_t count = 0;
    for (size_t i = 0; i < json_object_array_length(value); i++)
        count += strstr(json_object_get_string(json_object_array_get_idx(value, i)), part) != NULL;
    return count;
}

static void expect_verdict(json_object *document, const char *root_cause, pid_t tid)
{
    cr_assert(json_bool_at(document, "verdict.hung"), "%s", findings_text(document));
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), root_cause, "%s", findings_text(document));
    if (tid)
        cr_assert_eq(json_int_at(document, "verdict.tid", -1), tid);
}

static void expect_not_hung(json_object *document)
{
    cr_assert(!json_bool_at(document, "verdict.hung"), "%s", findings_text(document));
    expect_only_findings(document, (const char *const[]){ "idle", NULL });
}

/* A frame of the thread's native stack whose symbol contains every one of `parts` (NULL-terminated). */
static bool has_frame(json_object *thread, const char *const *parts)
{
    json_object *frames = json_at(thread, "frames");
    for (size_t f = 0; frames && f < json_object_array_length(frames); f++) {
        const char *symbol = json_string_at(json_object_array_get_idx(frames, f), "symbol");
        bool all = symbol != NULL;
        for (size_t p = 0; all && parts[p]; p++)
            all = strstr(symbol, parts[p]) != NULL;
        if (all)
            return true;
    }
    return false;
}

/* Starts fixture `name` (a program of tests/scenarios built by a toolchain) with `mode`, or skips. */
static void start_built(struct fixture *fixture, const char *name, const char *mode, const char *toolchain)
{
    const char *path = fixture_path(name);
    if (access(path, X_OK) != 0)
        cr_skip_test("%s is not built (no %s where the suite was built)", name, toolchain);
    fixture_start_command(fixture, path, (const char *[]){ name, mode, NULL }, READY_TIMEOUT_MS);
}

/* The fixture started, diagnosed as not hung, and stopped. */
static void expect_healthy(struct fixture *fixture)
{
    json_object *document = diagnose_expecting(fixture->pids[0], EXIT_NO_HANG);
    expect_not_hung(document);
    json_object_put(document);
    fixture_stop(fixture);
}

static void expect_healthy_built(const char *name, const char *mode, const char *toolchain)
{
    struct fixture fixture;
    start_built(&fixture, name, mode, toolchain);
    expect_healthy(&fixture);
}

/* ---- Rust --------------------------------------------------------------------------------------------------- */

/* std::sync::Mutex is a futex word of 0, 1 or 2 with no owner: which thread holds which lock no word says, so
 * the cycle is likely, told by the frame each thread sleeps in (demangled, from the symbol table alone). */
static void expect_rust_cycle(const char *mode, const char *lock, const char *const *frame_parts)
{
    struct fixture fixture;
    start_built(&fixture, "rust_locks", mode, "Debian's rustc");
    pid_t pid = fixture.pids[0], first = fixture.pids[1], second = fixture.pids[2];
    json_object *document = diagnose_expecting(pid, EXIT_HANG);
    json_object *finding = json_only_finding(document, "unowned-lock-cycle", pid);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "likely");
    cr_assert_eq(member_count(finding), 2, "%s", findings_text(document));
    cr_assert(json_finding_has_member(finding, first) && json_finding_has_member(finding, second));
    cr_assert_eq(evidence_containing(finding, "waiter", lock), 2, "%s", json_object_to_json_string(finding));
    expect_verdict(document, "unowned-lock-cycle", 0);
    expect_only_findings(document, (const char *const[]){ "unowned-lock-cycle", "idle", NULL });
    json_object *process = json_process(document, pid);
    for (pid_t tid = first; tid; tid = tid == first ? second : 0) {
        json_object *thread = json_thread(process, tid);
        cr_assert_str_eq(json_string_at(thread, "wait.lock.kind"), "unknown");
        cr_assert(has_frame(thread, frame_parts), "thread %d sleeps in %s, demangled", (int)tid, frame_parts[0]);
        cr_assert(has_frame(thread, (const char *const[]){ "rust_locks::lock_order_", NULL }));
    }
    /* the two waits are on two different locks: the word of one is not the other's */
    cr_assert_str_neq(json_string_at(json_thread(process, first), "wait.address"),
                      json_string_at(json_thread(process, second), "wait.address"));
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(runtimes, rust_mutex_lock_order_deadlock)
{
    expect_rust_cycle("mutex", "Rust's std::sync::Mutex at ",
                      (const char *const[]){ "Mutex", "::lock_contended", NULL });
}

/* Writers of a futex RwLock sleep on its second word: two locks, told apart by where their words lie. */
Test(runtimes, rust_rwlock_lock_order_deadlock)
{
    expect_rust_cycle("rwlock", "Rust's std::sync::RwLock, to write at ",
                      (const char *const[]){ "RwLock", "::write_contended", NULL });
}

/* A thread waits on a Condvar holding the Mutex that its only notifier must take first: the notifier sleeps
 * taking the Mutex, the waiter on the Condvar, and the main thread joins them. */
Test(runtimes, rust_condvar_waiter_holds_the_mutex_its_notifier_takes)
{
    struct fixture fixture;
    start_built(&fixture, "rust_locks", "condvar", "Debian's rustc");
    pid_t pid = fixture.pids[0], waiter = fixture.pids[1], notifier = fixture.pids[2];
    json_object *document = diagnose_expecting(pid, EXIT_HANG);
    json_object *finding = json_only_finding(document, "unowned-lock-cycle", pid);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "likely");
    cr_assert_eq(json_int_at(finding, "tid", -1), notifier);
    cr_assert_eq(member_count(finding), 2, "%s", json_object_to_json_string(finding));
    cr_assert(json_finding_has_member(finding, waiter) && json_finding_has_member(finding, notifier));
    cr_assert_eq(evidence_containing(finding, "condition_waiter", "'waits-for-ready' waits on a condition at 0x"), 1,
                 "%s", json_object_to_json_string(finding));
    cr_assert_eq(evidence_containing(finding, "waiter", "'would-notify' takes Rust's std::sync::Mutex at 0x"), 1);
    expect_verdict(document, "unowned-lock-cycle", notifier);
    expect_only_findings(document, (const char *const[]){ "unowned-lock-cycle", "idle", NULL });
    json_object_put(document);
    fixture_stop(&fixture);
}

/* A consumer parked on an mpsc channel that a producer feeds every second: not hung. */
Test(runtimes, rust_channel_consumer_fed_every_second)
{
    expect_healthy_built("rust_locks", "channel", "Debian's rustc");
}

Test(runtimes, rust_idle_server_with_a_heartbeat)
{
    expect_healthy_built("rust_locks", "idle", "Debian's rustc");
}

/* ---- musl, linked statically -------------------------------------------------------------------------------- */

/* musl's mutex keeps its lock word in its second int, the owner's tid there only for error-checking, recursive
 * and robust mutexes: an error-checking pair is a lock cycle with each owner read from the other's lock word. */
static void expect_musl_errorcheck_cycle(const char *program)
{
    struct fixture fixture;
    start_built(&fixture, program, "errorcheck", "musl-gcc");
    pid_t pid = fixture.pids[0], first = fixture.pids[1], second = fixture.pids[2];
    json_object *document = diagnose_expecting(pid, EXIT_HANG);
    json_object *finding = json_only_finding(document, "lock-cycle", pid);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "certain");
    cr_assert(json_finding_has_member(finding, first) && json_finding_has_member(finding, second), "%s",
              json_object_to_json_string(finding));
    json_object *process = json_process(document, pid);
    json_object *a = json_thread(process, first), *b = json_thread(process, second);
    cr_assert_eq(json_int_at(a, "wait.owner_tid", -1), second);
    cr_assert_eq(json_int_at(b, "wait.owner_tid", -1), first);
    cr_assert_str_eq(json_string_at(a, "wait.lock.type"), "musl error-checking");
    cr_assert_str_eq(json_string_at(a, "wait.lock.kind"), "mutex");
    expect_verdict(document, "lock-cycle", 0);
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(runtimes, musl_static_errorcheck_mutexes_in_a_lock_cycle)
{
    expect_musl_errorcheck_cycle("musl_locks");
}

/* No symbol table at all: the words alone tell the lock and its owner. */
Test(runtimes, musl_static_stripped_errorcheck_mutexes_in_a_lock_cycle)
{
    expect_musl_errorcheck_cycle("musl_locks_stripped");
}

/* A normal musl mutex's lock word says EBUSY (16), not an owner: never read as thread 16, nor as glibc's layout
 * (whose owner field would be musl's waiter count). A likely cycle of locks that record no owner. */
Test(runtimes, musl_static_normal_mutexes_record_no_owner)
{
    struct fixture fixture;
    start_built(&fixture, "musl_locks_stripped", "normal", "musl-gcc");
    pid_t pid = fixture.pids[0], first = fixture.pids[1], second = fixture.pids[2];
    json_object *document = diagnose_expecting(pid, EXIT_HANG);
    json_object *process = json_process(document, pid);
    for (pid_t tid = first; tid; tid = tid == first ? second : 0) {
        json_object *thread = json_thread(process, tid);
        cr_assert_null(json_at(thread, "wait.owner_tid"), "no owner for a normal mutex: %s",
                       json_object_to_json_string(json_at(thread, "wait")));
        cr_assert_str_eq(json_string_at(thread, "wait.lock.kind"), "unknown");
        cr_assert_str_eq(json_string_at(thread, "wait.lock.type"), "musl normal");
        cr_assert_eq(json_int_at(thread, "wait.expected", 0), 0x80000010LL, "EBUSY with the waiters bit");
    }
    json_object *finding = json_only_finding(document, "unowned-lock-cycle", pid);
    cr_assert(json_finding_has_member(finding, first) && json_finding_has_member(finding, second));
    cr_assert_eq(evidence_containing(finding, "waiter", "musl's pthread_mutex_t (normal)"), 2);
    expect_verdict(document, "unowned-lock-cycle", 0);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* The look-alike: a consumer waits on a condition that a producer signals every second. */
Test(runtimes, musl_static_consumer_fed_every_second)
{
    expect_healthy_built("musl_locks_stripped", "fed", "musl-gcc");
}

/* ---- Node --------------------------------------------------------------------------------------------------- */

static void start_node(struct fixture *fixture, const char *mode)
{
    if (access("/usr/bin/node", X_OK) != 0)
        cr_skip_test("no /usr/bin/node");
    char script[4096];
    snprintf(script, sizeof script, "%s/tests/scenarios/node_atomics.js", getenv("HANGDOC_SOURCE_ROOT"));
    fixture_start_command(fixture, "/usr/bin/node", (const char *[]){ "node", script, mode, NULL },
                          READY_TIMEOUT_MS);
}

/* The main thread and a worker each in Atomics.wait for a word only the other would set: V8 parks them on
 * condition variables of its own, which the process's libuv and platform threads look able to signal. */
Test(runtimes, node_main_thread_and_worker_in_atomics_wait_on_each_other)
{
    struct fixture fixture;
    start_node(&fixture, "deadlock");
    pid_t pid = fixture.pids[0], worker = fixture.pids[2];
    cr_assert_eq(fixture.pids[1], pid, "the main thread's tid is the pid");
    json_object *document = diagnose_expecting(pid, EXIT_HANG);
    json_object *finding = json_only_finding(document, "atomics-deadlock", pid);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "certain");
    cr_assert_eq(json_int_at(finding, "tid", -1), pid);
    cr_assert_eq(member_count(finding), 2, "%s", json_object_to_json_string(finding));
    cr_assert(json_finding_has_member(finding, pid) && json_finding_has_member(finding, worker));
    cr_assert_eq(evidence_containing(finding, "waiter", "the main thread, in Atomics.wait with no timeout"), 1);
    cr_assert_eq(evidence_containing(finding, "waiter", "a worker thread, in Atomics.wait with no timeout"), 1);
    expect_verdict(document, "atomics-deadlock", pid);
    json_object *thread = json_thread(json_process(document, pid), worker);
    cr_assert(has_frame(thread, (const char *const[]){ "v8::internal::FutexEmulation::Wait", NULL }));
    json_object_put(document);
    fixture_stop(&fixture);
}

/* The JIT's frames are named as such, not as bare addresses. */
Test(runtimes, node_jit_frames_are_named_as_jit_code)
{
    struct fixture fixture;
    start_node(&fixture, "deadlock");
    struct run_result result;
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)fixture.pids[0]);
    hangdoc_run(&result, (const char *[]){ "--samples", "1", pid, NULL });
    cr_assert(strstr(result.out, "(JIT code: V8's, in anonymous executable memory)"), "%s", result.out);
    cr_assert(!strstr(result.out, "(no file mapped there)"), "%s", result.out);
    run_result_free(&result);
    fixture_stop(&fixture);
}

/* A worker in Atomics.wait on a word that the main thread, alive in its event loop, bumps and notifies every
 * second: not hung. */
Test(runtimes, node_worker_in_atomics_wait_fed_every_second)
{
    struct fixture fixture;
    start_node(&fixture, "fed");
    expect_healthy(&fixture);
}

Test(runtimes, node_idle_http_server_with_a_heartbeat)
{
    struct fixture fixture;
    start_node(&fixture, "idle");
    expect_healthy(&fixture);
}

/* ---- Go ----------------------------------------------------------------------------------------------------- */

/* Two goroutines take sync.Mutex A then B and B then A while a third ticks every 100 ms: the runtime's "all
 * goroutines are asleep" never fires, and its OS threads poll and sleep on timers. The goroutines come from the
 * runtime's own list, their locks from its semaphore table. */
Test(runtimes, go_mutex_lock_order_deadlock_while_a_goroutine_ticks)
{
    struct fixture fixture;
    start_built(&fixture, "go_locks", "mutex", "Debian's golang-go");
    pid_t pid = fixture.pids[0];
    json_object *document = diagnose_expecting(pid, EXIT_HANG);
    json_object *finding = json_only_finding(document, "goroutine-deadlock", pid);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "likely");
    cr_assert_eq(json_int_at(finding, "tid", -1), pid);
    cr_assert_eq(evidence_containing(finding, "goroutine", "takes sync.Mutex at 0x"), 2,
                 "%s", json_object_to_json_string(finding));
    cr_assert_eq(evidence_containing(finding, "goroutine", " in main.lockOrder (started in main.main.func"), 2);
    cr_assert_eq(evidence_containing(finding, "other", "(chan receive) in main.main.func1"), 1, "the ticker");
    cr_assert_eq(evidence_containing(finding, "other", "(select (no cases)) in runtime.main"), 1, "main");
    expect_verdict(document, "goroutine-deadlock", pid);
    expect_only_findings(document, (const char *const[]){ "goroutine-deadlock", "idle", NULL });
    json_object *go = json_at(json_process(document, pid), "go");
    cr_assert_not_null(go);
    cr_assert(strncmp(json_string_at(go, "version"), "go1.", 4) == 0);
    cr_assert_null(json_at(go, "why_not"));
    json_object *goroutines = json_at(go, "goroutines");
    const char *semaphores[2] = { NULL, NULL };
    size_t takers = 0;
    for (size_t g = 0; g < json_object_array_length(goroutines); g++) {
        json_object *goroutine = json_object_array_get_idx(goroutines, g);
        if (!has_frame(goroutine, (const char *const[]){ "sync.(*Mutex).lockSlow", NULL }))
            continue;
        cr_assert_str_eq(json_string_at(goroutine, "status"), "waiting");
        cr_assert(json_bool_at(goroutine, "unchanged"));
        cr_assert(!json_bool_at(goroutine, "system"));
        cr_assert(has_frame(goroutine, (const char *const[]){ "main.lockOrder", NULL }));
        cr_assert_lt(takers, 2);
        semaphores[takers++] = json_string_at(goroutine, "semaphore");
    }
    cr_assert_eq(takers, 2);
    cr_assert(semaphores[0] && semaphores[1] && strcmp(semaphores[0], semaphores[1]) != 0, "two locks");
    json_object_put(document);
    fixture_stop(&fixture);
}

/* Built with -ldflags='-s -w': no symbol table to find the goroutines by. The report says so, and the verdict
 * is the one the threads give. */
Test(runtimes, go_binary_without_symbols_says_what_it_could_not_read)
{
    struct fixture fixture;
    start_built(&fixture, "go_locks_stripped", "mutex", "Debian's golang-go");
    pid_t pid = fixture.pids[0];
    json_object *document = diagnose_expecting(pid, EXIT_NO_HANG);
    cr_assert_eq(json_count_findings(document, "goroutine-deadlock", 0), 0);
    json_object *go = json_at(json_process(document, pid), "go");
    cr_assert_not_null(go, "a Go program still");
    cr_assert(strstr(json_string_at(go, "why_not"), "no symbol table"), "%s", json_string_at(go, "why_not"));
    cr_assert_eq(json_object_array_length(json_at(go, "goroutines")), 0);
    cr_assert(json_has_note(document, "Go program: goroutines not read: the executable has no symbol table"));
    json_object_put(document);
    fixture_stop(&fixture);
}

/* ---- Go, idle ----------------------------------------------------------------------------------------------- */

/* An HTTP server idle beside a ticker: the runtime's own threads poll and sleep on timers. */
Test(runtimes, go_idle_http_server_with_a_ticker)
{
    expect_healthy_built("go_locks", "idle", "Debian's golang-go");
}

Test(runtimes, go_channel_consumer_fed_every_second)
{
    expect_healthy_built("go_locks", "channel", "Debian's golang-go");
}

/* ---- Java --------------------------------------------------------------------------------------------------- */

static void start_java(struct fixture *fixture, const char *mode)
{
    char classes[4096];
    snprintf(classes, sizeof classes, "%s", fixture_path("JavaLocks.class"));
    if (access(classes, R_OK) != 0 || access("/usr/bin/java", X_OK) != 0)
        cr_skip_test("JavaLocks.class is not built (no Debian JDK where the suite was built)");
    *strrchr(classes, '/') = '\0';
    fixture_start_command(fixture, "/usr/bin/java", (const char *[]){ "java", "-cp", classes, "JavaLocks", mode,
                                                                      NULL },
                          READY_TIMEOUT_MS);
}

/* The thread of the process named `name` (the JVM gives a Java thread's OS thread its name); 0 when none is. */
static pid_t thread_named(json_object *document, pid_t pid, const char *name)
{
    json_object *threads = json_at(json_process(document, pid), "threads");
    for (size_t t = 0; threads && t < json_object_array_length(threads); t++) {
        json_object *thread = json_object_array_get_idx(threads, t);
        if (strcmp(json_string_at(thread, "name"), name) == 0)
            return (pid_t)json_int_at(thread, "tid", 0);
    }
    return 0;
}

/* The JVM's Java threads `first` and `second` each say the other owns what it waits for (`owner_key`, under
 * jvm.java_threads), of class `class_name`. */
static void expect_owned_by_each_other(json_object *document, pid_t pid, pid_t first, pid_t second,
                                       const char *what, const char *class_name)
{
    char owner_key[64], class_key[64];
    snprintf(owner_key, sizeof owner_key, "%s.owner_tid", what);
    snprintf(class_key, sizeof class_key, "%s.class", what);
    json_object *java_threads = json_at(json_process(document, pid), "jvm.java_threads");
    size_t seen = 0;
    for (size_t t = 0; java_threads && t < json_object_array_length(java_threads); t++) {
        json_object *thread = json_object_array_get_idx(java_threads, t);
        pid_t tid = (pid_t)json_int_at(thread, "tid", 0);
        if (tid != first && tid != second)
            continue;
        seen++;
        cr_assert_eq(json_int_at(thread, owner_key, 0), tid == first ? second : first);
        cr_assert_str_eq(json_string_at(thread, class_key), class_name);
    }
    cr_assert_eq(seen, 2);
}

/* Two threads synchronize on A then B and B then A. The JVM's GC, JIT and periodic threads keep running on
 * timers, and the blocked threads park on condition variables any of them could signal: only the JVM's own tables
 * (VMStructs) say that each monitor's owner is the other thread. */
Test(runtimes, java_monitor_deadlock_read_from_the_jvms_own_tables)
{
    struct fixture fixture;
    start_java(&fixture, "monitors");
    pid_t pid = fixture.pids[0];
    json_object *document = diagnose_expecting(pid, EXIT_HANG);
    pid_t first = thread_named(document, pid, "takes-a-then-b");
    pid_t second = thread_named(document, pid, "takes-b-then-a");
    cr_assert(first && second, "the Java threads' names are their OS threads'");
    json_object *finding = json_only_finding(document, "java-deadlock", pid);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "certain");
    cr_assert_eq(json_int_at(finding, "tid", -1), first < second ? first : second);
    cr_assert_eq(member_count(finding), 2);
    cr_assert(json_finding_has_member(finding, first) && json_finding_has_member(finding, second));
    cr_assert_eq(evidence_containing(finding, "waiter", ", a java.lang.Object), which is held by \""), 2,
                 "%s", json_object_to_json_string(finding));
    char held_by_second[96];
    snprintf(held_by_second, sizeof held_by_second, "which is held by \"takes-b-then-a\" (thread %d)", (int)second);
    cr_assert_eq(evidence_containing(finding, "waiter", held_by_second), 1);
    expect_verdict(document, "java-deadlock", 0);
    expect_only_findings(document, (const char *const[]){ "java-deadlock", "idle", NULL });
    json_object *jvm = json_at(json_process(document, pid), "jvm");
    cr_assert_not_null(jvm);
    cr_assert_null(json_at(jvm, "why_not"));
    cr_assert_not_null(json_string_at(jvm, "release"));
    expect_owned_by_each_other(document, pid, first, second, "pending_monitor", "java.lang.Object");
    json_object_put(document);
    /* and the text, as jstack says it */
    struct run_result result;
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    hangdoc_run(&result, (const char *[]){ "--samples", "1", pid_text, NULL });
    cr_assert(strstr(result.out, "\nFound one Java-level deadlock:\n=============================\n\"takes-"),
              "%s", result.out);
    cr_assert(strstr(result.out, "  waiting to lock monitor 0x"), "%s", result.out);
    run_result_free(&result);
    fixture_stop(&fixture);
}

/* The same with ReentrantLocks: the threads park for each other's lock, whose synchronizer names its owner
 * (AbstractOwnableSynchronizer.exclusiveOwnerThread), found by the fields' names in the classes of the JVM. */
Test(runtimes, java_reentrant_lock_deadlock_read_from_the_locks_owners)
{
    struct fixture fixture;
    start_java(&fixture, "reentrant");
    pid_t pid = fixture.pids[0];
    json_object *document = diagnose_expecting(pid, EXIT_HANG);
    pid_t first = thread_named(document, pid, "takes-a-then-b");
    pid_t second = thread_named(document, pid, "takes-b-then-a");
    cr_assert(first && second);
    json_object *finding = json_only_finding(document, "java-deadlock", pid);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "certain");
    cr_assert(json_finding_has_member(finding, first) && json_finding_has_member(finding, second));
    cr_assert_eq(evidence_containing(finding, "waiter", "waits for ownable synchronizer 0x"), 2, "%s",
                 json_object_to_json_string(finding));
    cr_assert_eq(evidence_containing(finding, "waiter", "(a java.util.concurrent.locks.ReentrantLock$NonfairSync), "
                                                        "which is held by \"takes-"), 2);
    expect_verdict(document, "java-deadlock", 0);
    expect_owned_by_each_other(document, pid, first, second, "parked_for",
                               "java.util.concurrent.locks.ReentrantLock$NonfairSync");
    json_object_put(document);
    fixture_stop(&fixture);
}

/* A consumer parked in BlockingQueue.take() (for a condition, which no thread owns) fed every second. */
Test(runtimes, java_queue_consumer_fed_every_second)
{
    struct fixture fixture;
    start_java(&fixture, "queue");
    expect_healthy(&fixture);
}

/* A ServerSocket idle in accept() beside a scheduled heartbeat, and the JVM's own twenty-odd threads. */
Test(runtimes, java_idle_server_with_a_heartbeat)
{
    struct fixture fixture;
    start_java(&fixture, "idle");
    expect_healthy(&fixture);
}

/* A process that maps a libjvm.so whose VMStructs lack the fields hangdoc reads (a JDK it does not know): a note
 * says so, and the verdict is the threads' own. */
Test(runtimes, jvm_of_an_unknown_version_says_what_it_could_not_read)
{
    struct fixture fixture;
    fixture_start(&fixture, "jvm_unknown");
    pid_t pid = fixture.pids[0];
    json_object *document = diagnose_expecting(pid, EXIT_NO_HANG);
    json_object *jvm = json_at(json_process(document, pid), "jvm");
    cr_assert_not_null(jvm, "it maps a libjvm.so");
    cr_assert(strstr(json_string_at(jvm, "why_not"), "an unknown JDK"), "%s", json_string_at(jvm, "why_not"));
    cr_assert(json_has_note(document, "JVM: Java threads not read: its VMStructs table lacks a field"));
    expect_only_findings(document, (const char *const[]){ "idle", NULL });
    json_object_put(document);
    fixture_stop(&fixture);
}
