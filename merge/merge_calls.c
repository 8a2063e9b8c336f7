/* The table of a job's collectives (merge_model.h): which ranks are in which call, from each rank's latest
 * report. A call is a collective and its call site ("all_reduce at train.py:41"): two ranks in all_reduce from two
 * lines of the script are in two calls, as surely as ranks in all_reduce and broadcast are. A report without the
 * `collective` of its rank's process (older ones) gives the collective its stack names, without a site. */
#include "merge_model.h"

#include <stdlib.h>
#include <string.h>

static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int by_size(const void *a, const void *b)
{
    const struct report_merge_call_row *x = a, *y = b;
    if (x->ranks.count != y->ranks.count)
        return x->ranks.count > y->ranks.count ? -1 : 1;
    return (x->ranks.ranks[0] > y->ranks.ranks[0]) - (x->ranks.ranks[0] < y->ranks.ranks[0]);
}

bool report_merge_tabulate_calls(const struct report_merge *merge, struct report_merge_job *job)
{
    for (size_t r = 0; r < job->nranks; r++) {
        const struct report_merge_observation *observation = &merge->observations[job->ranks[r].latest];
        const char *name = observation->call.name, *site = observation->call.site;
        bool waited_long = observation->call.waited_long, timed = observation->call.timed;
        if (!name && observation->wait)
            name = observation->wait->collective;
        if (!name) {
            if (!report_rank_set_add(&job->in_no_call, observation->rank))
                return false;
            continue;
        }
        struct report_merge_call_row *row = NULL;
        for (size_t c = 0; c < job->ncalls && !row; c++)
            if (strcmp(job->calls[c].name, name) == 0 && same_text(job->calls[c].site, site))
                row = &job->calls[c];
        if (!row) {
            if (!report_merge_grow((void **)&job->calls, &job->calls_capacity, job->ncalls, sizeof *job->calls))
                return false;
            row = &job->calls[job->ncalls++];
            *row = (struct report_merge_call_row){ .name = name, .site = site, .timed = true, .waited_long = true };
        }
        row->timed = row->timed && timed;
        row->waited_long = row->waited_long && waited_long;
        if (!report_rank_set_add(&row->ranks, observation->rank))
            return false;
    }
    if (job->ncalls > 1)
        qsort(job->calls, job->ncalls, sizeof *job->calls, by_size);
    return true;
}

void report_merge_describe_call(const struct report_merge_call_row *row, struct report_buffer *out)
{
    report_buffer_puts(out, row->name);
    if (row->site)
        report_buffer_printf(out, " at %s", row->site);
}
