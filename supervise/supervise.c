/* The supervisor (supervise.h).
 *
 * Two processes of ours: the wrapper, and its child the agent, which starts the command and diagnoses it when the
 * wrapper asks. The agent is the command's parent, so it is an ancestor of the whole job, which is what Yama's
 * ptrace_scope 1 (Ubuntu's default, CI runners included) requires of a tracer without CAP_SYS_PTRACE; a subreaper
 * too, so that workers whose parent died stay its descendants. The wrapper keeps the deadline: an agent that does
 * not finish a diagnosis in time is killed, the job passes to the wrapper (a subreaper as well), which still ends
 * the tree and exits; later diagnoses then run in a forked child of the wrapper (stacks only where ptrace allows).
 * Signals reach the wrapper's loop through a self-pipe, so nothing but write() runs in a handler.
 */
#include "supervise.h"

#include "probe.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_TIMED_OUT 124 /* as timeout(1) */
#define EXIT_INTERNAL 70   /* EX_SOFTWARE, as hangdoc's own */

enum trigger { TRIGGER_NONE, TRIGGER_TIMEOUT, TRIGGER_STALL, TRIGGER_USR1, TRIGGER_CANCEL };

static int signal_pipe[2] = { -1, -1 };

static void on_signal(int number)
{
    int saved = errno;
    unsigned char byte = (unsigned char)number;
    ssize_t ignored = write(signal_pipe[1], &byte, 1);
    (void)ignored;
    errno = saved;
}

static long long now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static unsigned diagnosis_ms(bool quick)
{
    return quick ? SUPERVISE_QUICK_DIAGNOSIS_MS : SUPERVISE_DIAGNOSIS_MS;
}

/* ---- the command --------------------------------------------------------------------------------------------- */

struct command {
    pid_t pid;
    int out_pipe; /* with --stall: its stdout and stderr, relayed by us; else -1 */
    int err_pipe;
    bool ended;
    int wait_status;
    pid_t agent;      /* 0 once it is gone */
    int agent_orders; /* to the agent: one byte per diagnosis, AGENT_FULL or AGENT_QUICK */
    int agent_news;   /* from the agent: struct agent_news */
};

/* What the agent tells the wrapper, one message per write (atomic: shorter than PIPE_BUF). */
struct agent_news {
    char kind;  /* AGENT_STARTED (value: the command's pid), AGENT_DIAGNOSED (value: hangdoc's exit status),
                   AGENT_ENDED (value: the command's wait status) */
    int value;
};
enum { AGENT_STARTED = 's', AGENT_DIAGNOSED = 'd', AGENT_ENDED = 'e', AGENT_FULL = 'f', AGENT_QUICK = 'q' };

/* In the agent's child: the command, with the signal dispositions and mask of a fresh process. */
static _Noreturn void exec_command(const struct supervise_options *run, int out, int err, int exec_error)
{
    static const int reset[] = { SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGCHLD };
    for (size_t i = 0; i < COUNT(reset); i++)
        signal(reset[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (run->stall_ms) {
        dup2(out, STDOUT_FILENO);
        dup2(err, STDERR_FILENO);
    }
    execvp(run->command[0], run->command);
    int error = errno;
    ssize_t ignored = write(exec_error, &error, sizeof error);
    (void)ignored;
    _exit(127);
}

static void tell(int news, char kind, int value)
{
    struct agent_news message = { .kind = kind, .value = value };
    ssize_t ignored = write(news, &message, sizeof message);
    (void)ignored;
}

static int diagnose_tree_below(pid_t parent, pid_t exclude, const struct supervise_hooks *hooks, bool quick);

/* The agent: starts the command, then diagnoses on order until the command ends, which it reports and follows. */
static _Noreturn void run_agent(const struct supervise_hooks *hooks, const struct supervise_options *run, int out[2],
                                int err[2], int exec_error[2], int orders, int news)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    /* the wrapper answers signals; the command gets them from whoever sends them to it */
    static const int ignored_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1 };
    for (size_t i = 0; i < COUNT(ignored_signals); i++)
        signal(ignored_signals[i], SIG_IGN);
    signal(SIGCHLD, SIG_DFL);
    close(signal_pipe[0]);
    close(signal_pipe[1]);
    /* a child's end wakes the loop through a signalfd: no polling while the job runs for hours (the command's
     * mask is emptied again before it is executed) */
    sigset_t child_ended;
    sigemptyset(&child_ended);
    sigaddset(&child_ended, SIGCHLD);
    sigprocmask(SIG_BLOCK, &child_ended, NULL);
    int children = signalfd(-1, &child_ended, SFD_CLOEXEC | SFD_NONBLOCK);
    pid_t command = fork();
    if (command < 0) {
        perror("hangdoc run: fork");
        _exit(EXIT_INTERNAL);
    }
    if (command == 0)
        exec_command(run, out[1], err[1], exec_error[1]);
    close(exec_error[1]);
    if (run->stall_ms) {
        close(out[1]);
        close(err[1]);
    }
    tell(news, AGENT_STARTED, command);
    for (;;) {
        int status;
        pid_t ended;
        /* a diagnosis that waited for the command to stop while it ended reaped it: we are its tracer and parent */
        if (probe_stop_took_end(command, &status)) {
            tell(news, AGENT_ENDED, status);
            _exit(0);
        }
        while ((ended = waitpid(-1, &status, WNOHANG)) > 0) {
            /* as their tracer we also hear of threads that stopped after a diagnosis let them linger */
            if (WIFSTOPPED(status)) {
                probe_stop_reported_elsewhere(ended, status);
                continue;
            }
            probe_stop_reported_elsewhere(ended, status);
            if (ended == command) {
                tell(news, AGENT_ENDED, status);
                _exit(0); /* what is left of the job passes to the wrapper */
            }
        }
        struct pollfd events[2] = { { .fd = orders, .events = POLLIN }, { .fd = children, .events = POLLIN } };
        /* without a signalfd (it failed), look for ended children every 50 ms */
        if (poll(events, 2, children >= 0 ? -1 : 50) <= 0)
            continue;
        struct signalfd_siginfo drained;
        while (children >= 0 && read(children, &drained, sizeof drained) == (ssize_t)sizeof drained)
            ;
        if (!(events[0].revents & (POLLIN | POLLHUP)))
            continue;
        char kind;
        if (read(orders, &kind, 1) != 1)
            _exit(0); /* the wrapper is gone */
        tell(news, AGENT_DIAGNOSED, diagnose_tree_below(getpid(), 0, hooks, kind == AGENT_QUICK));
    }
}

/* Both ends of a pipe, closed when it goes out of scope; an end handed on is set to -1 first (steal_fd). */
static void close_pipe(int (*ends)[2])
{
    hd_close_fd(&(*ends)[0]);
    hd_close_fd(&(*ends)[1]);
}

/* Starts the agent, which starts the command; returns 0, or the exit status when the command could not be
 * executed (126, 127). Every pipe end not handed to `command` is closed on every way out. */
static int start_command(const struct supervise_hooks *hooks, const struct supervise_options *run,
                         struct command *command)
{
    int out[2] cleanup_with(close_pipe) = { -1, -1 }, err[2] cleanup_with(close_pipe) = { -1, -1 };
    int exec_error[2] cleanup_with(close_pipe) = { -1, -1 }, orders[2] cleanup_with(close_pipe) = { -1, -1 };
    int news[2] cleanup_with(close_pipe) = { -1, -1 };
    if (pipe2(exec_error, O_CLOEXEC) != 0 || pipe2(orders, O_CLOEXEC) != 0 || pipe2(news, O_CLOEXEC) != 0 ||
        (run->stall_ms && (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0))) {
        perror("hangdoc run: pipe");
        return EXIT_INTERNAL;
    }
    pid_t agent = fork();
    if (agent < 0) {
        perror("hangdoc run: fork");
        return EXIT_INTERNAL;
    }
    if (agent == 0) {
        hd_close_fd(&orders[1]);
        hd_close_fd(&news[0]);
        hd_close_fd(&exec_error[0]);
        hd_close_fd(&out[0]);
        hd_close_fd(&err[0]);
        run_agent(hooks, run, out, err, exec_error, orders[0], news[1]);
    }
    /* the agent's ends */
    hd_close_fd(&exec_error[1]);
    hd_close_fd(&orders[0]);
    hd_close_fd(&news[1]);
    hd_close_fd(&out[1]);
    hd_close_fd(&err[1]);
    *command = (struct command){ .pid = 0, .out_pipe = steal_fd(&out[0]), .err_pipe = steal_fd(&err[0]),
                                 .agent = agent, .agent_orders = steal_fd(&orders[1]),
                                 .agent_news = steal_fd(&news[0]) };
    struct agent_news started = { 0 };
    ssize_t got;
    while ((got = read(command->agent_news, &started, sizeof started)) < 0 && errno == EINTR)
        ;
    if (got != (ssize_t)sizeof started || started.kind != AGENT_STARTED) {
        fprintf(stderr, "hangdoc run: the command could not be started\n");
        waitpid(agent, NULL, 0);
        return EXIT_INTERNAL;
    }
    command->pid = started.value;
    int error = 0;
    while ((got = read(exec_error[0], &error, sizeof error)) < 0 && errno == EINTR)
        ;
    fcntl(command->agent_news, F_SETFL, O_NONBLOCK);
    if (got == (ssize_t)sizeof error) {
        /* as the shell: 127 when there is no such command, 126 when it is there but cannot be executed */
        fprintf(stderr, "hangdoc run: cannot execute '%s': %s\n", run->command[0], strerror(error));
        waitpid(agent, NULL, 0);
        return error == ENOENT ? 127 : 126;
    }
    return 0;
}

static int status_of(int wait_status)
{
    if (WIFEXITED(wait_status))
        return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status))
        return 128 + WTERMSIG(wait_status);
    return EXIT_INTERNAL;
}

/* Reads what the agent said; a diagnosis's end is handed back in *diagnosed (when not NULL). */
static void read_agent_news(struct command *command, bool *diagnosed)
{
    struct agent_news message;
    while (command->agent_news >= 0 && read(command->agent_news, &message, sizeof message) == sizeof message) {
        if (message.kind == AGENT_ENDED) {
            command->ended = true;
            command->wait_status = message.value;
        } else if (message.kind == AGENT_DIAGNOSED && diagnosed) {
            *diagnosed = true;
        }
    }
}

/* Reaps every child that ended (the agent, and the job's processes once the agent is gone); notes the command's
 * status, which the agent reports, or which we see ourselves when it outlived the agent; and the end of a
 * diagnosis in *diagnosed (when not NULL). */
static void reap_telling(struct command *command, bool *diagnosed)
{
    read_agent_news(command, diagnosed);
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (pid == command->pid) {
            command->ended = true;
            command->wait_status = status;
        }
        if (pid == command->agent) {
            command->agent = 0;
            read_agent_news(command, diagnosed); /* what it said before it went */
        }
    }
}

static void reap(struct command *command)
{
    reap_telling(command, NULL);
}

/* Copies what the command wrote to our stdout/stderr as it comes; false at end of file. */
static bool relay(int *from, int to)
{
    char chunk[65536];
    ssize_t got = read(*from, chunk, sizeof chunk);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return true;
    if (got <= 0) {
        close(*from);
        *from = -1;
        return false;
    }
    for (ssize_t done = 0; done < got;) {
        ssize_t wrote = write(to, chunk + done, (size_t)(got - done));
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote <= 0)
            break; /* our own output is gone; keep the command running regardless */
        done += wrote;
    }
    return true;
}

/* ---- the tree ------------------------------------------------------------------------------------------------ */

#define TREE_MAX 4096

/* Our descendants now: the command's tree and the orphans handed to us. */
static ssize_t tree_now(pid_t exclude, struct probe_relative *tree)
{
    return probe_list_descendants(getpid(), exclude, tree, TREE_MAX);
}

static void signal_tree(int number)
{
    struct probe_relative tree[TREE_MAX];
    ssize_t count = tree_now(0, tree);
    for (ssize_t i = 0; i < count; i++)
        kill(tree[i].pid, number);
}

/* Sends `first` to the tree, SIGKILL to what is left after kill_after_ms, and reaps everything. */
static void end_tree(struct command *command, int first, unsigned kill_after_ms)
{
    signal_tree(first);
    long long give_up = now_ms() + kill_after_ms;
    for (;;) {
        reap(command);
        struct probe_relative tree[TREE_MAX];
        ssize_t left = tree_now(0, tree);
        if (left <= 0)
            return; /* nothing left, or /proc unreadable: nothing more we can do */
        size_t alive = 0;
        for (ssize_t i = 0; i < left; i++)
            alive += tree[i].state != 'Z';
        if (alive > 0 && now_ms() >= give_up) {
            signal_tree(SIGKILL);
            give_up = now_ms() + 60000; /* SIGKILL cannot be refused; only a D-state process makes us wait */
        }
        usleep(20000);
    }
}

/* ---- the diagnosis ------------------------------------------------------------------------------------------- */

/* Diagnoses the processes below `parent` (its children are the roots), leaving out `exclude` and what descends
 * from it; returns hangdoc's exit status. */
static int diagnose_tree_below(pid_t parent, pid_t exclude, const struct supervise_hooks *hooks, bool quick)
{
    static struct probe_relative tree[TREE_MAX];
    static pid_t roots[TREE_MAX];
    size_t count = 0;
    ssize_t all = probe_list_descendants(parent, exclude, tree, TREE_MAX);
    for (ssize_t i = 0; i < all; i++)
        if (tree[i].ppid == parent)
            roots[count++] = tree[i].pid;
    return hooks->diagnose(hooks->context, roots, count, parent == getpid(), quick);
}

static void say_killed(const struct supervise_hooks *hooks, const struct command *command, bool quick)
{
    char why[256];
    snprintf(why, sizeof why,
             "hangdoc run: the diagnosis did not finish within %u s and was killed (a /proc file or a mapped "
             "file that does not answer?): no report",
             diagnosis_ms(quick) / 1000);
    fprintf(stderr, "hangdoc run: the diagnosis did not finish in time; going on without it\n");
    hooks->unfinished(hooks->context, command->pid, why);
}

/* Without the agent: a child of the wrapper diagnoses the wrapper's other children (the job the agent left). */
static void diagnose_from_a_child(const struct supervise_hooks *hooks, struct command *command, bool quick)
{
    pid_t wrapper = getpid();
    pid_t doctor = fork();
    if (doctor < 0) {
        int error = errno;
        char why[160];
        snprintf(why, sizeof why, "hangdoc run: no diagnosis could be started: fork: %s", strerror(error));
        fprintf(stderr, "%s\n", why);
        hooks->unfinished(hooks->context, command->pid, why);
        return;
    }
    if (doctor == 0) {
        /* not the wrapper's handlers, which write to its self-pipe: a signal to the whole group counts once */
        static const int defaults[] = { SIGTERM, SIGINT, SIGHUP, SIGCHLD };
        for (size_t i = 0; i < COUNT(defaults); i++)
            signal(defaults[i], SIG_DFL);
        signal(SIGUSR1, SIG_IGN);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        _exit(diagnose_tree_below(wrapper, getpid(), hooks, quick));
    }
    long long give_up = now_ms() + diagnosis_ms(quick);
    for (;;) {
        int status;
        pid_t done = waitpid(doctor, &status, WNOHANG);
        if (done == doctor && WIFSIGNALED(status)) {
            char why[160];
            snprintf(why, sizeof why, "hangdoc run: the diagnosis was ended by signal %d (%s): no report",
                     WTERMSIG(status), strsignal(WTERMSIG(status)));
            fprintf(stderr, "%s\n", why);
            hooks->unfinished(hooks->context, command->pid, why);
        }
        if (done == doctor)
            break;
        if (now_ms() >= give_up) {
            kill(doctor, SIGKILL);
            waitpid(doctor, NULL, 0);
            say_killed(hooks, command, quick);
            break;
        }
        usleep(10000);
    }
    reap(command);
}

/* Has the agent diagnose, with a deadline: an agent stuck in /proc is killed, and the wrapper goes on. */
static void diagnose(const struct supervise_hooks *hooks, struct command *command, bool quick)
{
    reap(command);
    char order = quick ? AGENT_QUICK : AGENT_FULL;
    if (!command->agent || write(command->agent_orders, &order, 1) != 1) {
        diagnose_from_a_child(hooks, command, quick);
        return;
    }
    long long give_up = now_ms() + diagnosis_ms(quick);
    bool diagnosed = false;
    while (!diagnosed && command->agent) {
        long long left = give_up - now_ms();
        if (left <= 0) {
            kill(command->agent, SIGKILL);
            while (waitpid(command->agent, NULL, 0) < 0 && errno == EINTR)
                ;
            command->agent = 0;
            say_killed(hooks, command, quick);
            return;
        }
        struct pollfd news = { .fd = command->agent_news, .events = POLLIN };
        poll(&news, 1, left > 100 ? 100 : (int)left);
        reap_telling(command, &diagnosed); /* an agent that died in the diagnosis is reaped here: the loop ends */
    }
    if (!diagnosed) {
        /* the agent is gone without a report: it crashed, or it followed the command out (it leaves when the
         * command ends) and what is left of the job is the wrapper's now. The report is what the run is for. */
        if (!command->ended)
            fprintf(stderr, "hangdoc run: the diagnosis ended early; once more from another process\n");
        diagnose_from_a_child(hooks, command, quick);
    }
}

/* ---- the loop ------------------------------------------------------------------------------------------------ */

static void install_handlers(void)
{
    static const int signals[] = { SIGCHLD, SIGUSR1, SIGTERM, SIGINT, SIGHUP };
    struct sigaction action = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < COUNT(signals); i++)
        sigaction(signals[i], &action, NULL);
}

/* Waits for the next thing to happen: returns the trigger, or TRIGGER_NONE when the command ended. */
static enum trigger wait_for_trigger(const struct supervise_options *run, struct command *command, long long deadline,
                                     int *cancel_signal)
{
    long long last_output = now_ms();
    for (;;) {
        reap(command);
        if (command->ended && command->out_pipe < 0 && command->err_pipe < 0)
            return TRIGGER_NONE;
        long long now = now_ms(), wake = deadline ? deadline : now + 60000;
        if (run->stall_ms && !command->ended && last_output + run->stall_ms < wake)
            wake = last_output + run->stall_ms;
        if (deadline && now >= deadline)
            return TRIGGER_TIMEOUT;
        if (run->stall_ms && !command->ended && now >= last_output + run->stall_ms)
            return TRIGGER_STALL;
        struct pollfd fds[4] = {
            { .fd = signal_pipe[0], .events = POLLIN },
            { .fd = command->out_pipe, .events = POLLIN },
            { .fd = command->err_pipe, .events = POLLIN },
            { .fd = command->agent ? command->agent_news : -1, .events = POLLIN },
        };
        int timeout = wake - now > 60000 ? 60000 : (int)(wake - now);
        if (command->ended)
            timeout = 100; /* draining what is left in the pipes */
        if (poll(fds, 4, timeout) < 0 && errno != EINTR)
            return TRIGGER_NONE;
        if (fds[0].revents & POLLIN) {
            unsigned char number;
            while (read(signal_pipe[0], &number, 1) == 1) {
                if (number == SIGUSR1)
                    return TRIGGER_USR1;
                if (number == SIGTERM || number == SIGINT || number == SIGHUP) {
                    *cancel_signal = number;
                    return TRIGGER_CANCEL;
                }
            }
        }
        if (fds[1].revents & (POLLIN | POLLHUP | POLLERR))
            last_output = relay(&command->out_pipe, STDOUT_FILENO) ? now_ms() : last_output;
        if (fds[2].revents & (POLLIN | POLLHUP | POLLERR))
            last_output = relay(&command->err_pipe, STDERR_FILENO) ? now_ms() : last_output;
        if (command->ended && fds[1].revents == 0 && fds[2].revents == 0) {
            /* the command is gone and its pipes are quiet: what is still holding them is a leftover child */
            if (command->out_pipe >= 0)
                close(command->out_pipe);
            if (command->err_pipe >= 0)
                close(command->err_pipe);
            command->out_pipe = command->err_pipe = -1;
        }
    }
}

int supervise_run(const struct supervise_options *options, const struct supervise_hooks *hooks)
{
    struct supervise_options run = *options; /* a timeout with keep_running stops watching: changed below */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        fprintf(stderr, "hangdoc run: cannot become a subreaper (%s): orphaned workers leave the tree\n",
                strerror(errno));
    if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        perror("hangdoc run: pipe");
        return EXIT_INTERNAL;
    }
    install_handlers();
    struct command command;
    int status = start_command(hooks, &run, &command);
    if (status)
        return status;
    long long deadline = run.timeout_ms ? now_ms() + run.timeout_ms : 0;
    for (;;) {
        int cancel_signal = 0;
        enum trigger trigger = wait_for_trigger(&run, &command, deadline, &cancel_signal);
        switch (trigger) {
        case TRIGGER_NONE:
            return status_of(command.wait_status);
        case TRIGGER_USR1:
            diagnose(hooks, &command, false);
            continue;
        case TRIGGER_CANCEL:
            diagnose(hooks, &command, true);
            end_tree(&command, cancel_signal, run.kill_after_ms);
            return command.ended ? status_of(command.wait_status) : 128 + cancel_signal;
        case TRIGGER_TIMEOUT:
        case TRIGGER_STALL:
            fprintf(stderr, "\nhangdoc run: %s\n",
                    trigger == TRIGGER_TIMEOUT ? "the command ran past --timeout" : "no output for --stall");
            diagnose(hooks, &command, false);
            if (run.keep_running) {
                deadline = 0;
                run.stall_ms = 0;
                continue;
            }
            end_tree(&command, run.end_signal, run.kill_after_ms);
            return EXIT_TIMED_OUT;
        }
    }
}
