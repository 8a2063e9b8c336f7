/* The rank table, prefix tree and classes of every job (merge_model.h).
 *
 * Each rank is placed by its latest report (the last one taken): its main thread's stack, outermost frame first,
 * is a path from the root of its job's tree, and every node on the path gets the rank; the node where the path ends
 * is its leaf. A class is the ranks that share a leaf and whose reports say the same of them (hung or not, the same
 * cause and root cause), so that a rank whose stack looks like everyone's but whose worker is stuck is its own
 * class. Earlier reports of the same process say whether its stack moved (STAT's view over time).
 */
#include "merge_model.h"

#include <stdlib.h>
#include <string.h>

#define CONFLICTS_NOTED 5

static int compare_observations(const void *a, const void *b, void *context)
{
    const struct report_merge *merge = context;
    const struct report_merge_observation *x = &merge->observations[*(const size_t *)a];
    const struct report_merge_observation *y = &merge->observations[*(const size_t *)b];
    double x_taken = merge->documents[x->document].taken_at, y_taken = merge->documents[y->document].taken_at;
    if (x->job != y->job)
        return x->job < y->job ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x_taken != y_taken)
        return x_taken < y_taken ? -1 : 1;
    /* the same time: the order the reports came in, so that the result does not depend on qsort */
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static bool same_stack(const struct report_merge_observation *a, const struct report_merge_observation *b)
{
    if (a->nstack != b->nstack)
        return false;
    for (size_t f = 0; f < a->nstack; f++)
        if (strcmp(a->stack[f], b->stack[f]) != 0)
            return false;
    return true;
}

static bool same_process(const struct report_merge *merge, const struct report_merge_observation *a,
                         const struct report_merge_observation *b)
{
    const struct report_merge_document *x = &merge->documents[a->document], *y = &merge->documents[b->document];
    bool same_boot = (!x->boot_id && !y->boot_id) || (x->boot_id && y->boot_id && strcmp(x->boot_id, y->boot_id) == 0);
    return a->pid == b->pid && same_boot && strcmp(x->host, y->host) == 0;
}

/* Over the reports of one rank: did its stack stay the same, and do the reports show one process? The first
 * CONFLICTS_NOTED ranks shown as several processes get a note each, the others one together. */
static bool compare_reports(struct report_merge *merge, struct report_merge_rank *rank, size_t *conflicts)
{
    const struct report_merge_observation *latest = &merge->observations[rank->latest];
    size_t same_process_reports = 0;
    rank->unchanged = 1;
    for (size_t i = rank->first; i < rank->first + rank->reports; i++) {
        const struct report_merge_observation *earlier = &merge->observations[merge->order[i]];
        if (!same_process(merge, earlier, latest)) {
            rank->conflict = true;
            continue;
        }
        same_process_reports++;
        if (!same_stack(earlier, latest))
            rank->unchanged = 0;
    }
    if (same_process_reports < 2)
        rank->unchanged = -1;
    if (!rank->conflict || (*conflicts)++ >= CONFLICTS_NOTED)
        return true;
    const struct report_merge_document *where = &merge->documents[latest->document];
    return report_merge_add_note(merge, where->source, "rank %d is shown as more than one process (a restart, or "
                                 "two jobs of one name): the latest, pid %d on %s, is used",
                                 rank->rank, (int)latest->pid, where->host);
}

/* Groups the sorted observations into each job's ranks. */
static bool build_rank_tables(struct report_merge *merge)
{
    size_t conflicts = 0;
    for (size_t i = 0; i < merge->nobservations;) {
        const struct report_merge_observation *first = &merge->observations[merge->order[i]];
        struct report_merge_job *job = &merge->jobs[first->job];
        size_t end = i;
        while (end < merge->nobservations && merge->observations[merge->order[end]].job == first->job &&
               merge->observations[merge->order[end]].rank == first->rank)
            end++;
        struct report_merge_rank *grown = realloc(job->ranks, (job->nranks + 1) * sizeof *grown);
        if (!grown)
            return false;
        job->ranks = grown;
        struct report_merge_rank *rank = &job->ranks[job->nranks++];
        *rank = (struct report_merge_rank){ .rank = first->rank, .first = i, .reports = end - i,
                                            .latest = merge->order[end - 1], .leaf = REPORT_MERGE_NONE,
                                            .class_id = REPORT_MERGE_NONE };
        if (!compare_reports(merge, rank, &conflicts) || !report_rank_set_add(&job->seen, first->rank))
            return false;
        i = end;
    }
    if (conflicts <= CONFLICTS_NOTED)
        return true;
    return report_merge_add_note(merge, NULL, "%zu more ranks are shown as more than one process: the latest of each "
                                 "is used", conflicts - CONFLICTS_NOTED);
}

/* ---- the prefix tree ---- */

static size_t add_node(struct report_merge_job *job, size_t parent, const char *label)
{
    if (!report_merge_grow((void **)&job->nodes, &job->nodes_capacity, job->nnodes, sizeof *job->nodes))
        return REPORT_MERGE_NONE;
    size_t index = job->nnodes++;
    job->nodes[index] = (struct report_merge_node){
        .label = label, .parent = parent, .first_child = REPORT_MERGE_NONE, .last_child = REPORT_MERGE_NONE,
        .next_sibling = REPORT_MERGE_NONE, .first_class = REPORT_MERGE_NONE,
        .depth = parent == REPORT_MERGE_NONE ? 0 : job->nodes[parent].depth + 1,
    };
    if (parent != REPORT_MERGE_NONE) {
        struct report_merge_node *up = &job->nodes[parent];
        if (up->last_child == REPORT_MERGE_NONE)
            up->first_child = index;
        else
            job->nodes[up->last_child].next_sibling = index;
        up->last_child = index;
    }
    return index;
}

static size_t child_labelled(const struct report_merge_job *job, size_t parent, const char *label)
{
    for (size_t c = job->nodes[parent].first_child; c != REPORT_MERGE_NONE; c = job->nodes[c].next_sibling)
        if (strcmp(job->nodes[c].label, label) == 0)
            return c;
    return REPORT_MERGE_NONE;
}

/* Walks the rank's stack down from the root, adding the nodes it is the first to reach. */
static bool place_rank(struct report_merge_job *job, struct report_merge_rank *rank,
                       const struct report_merge_observation *observation)
{
    size_t node = 0;
    if (!report_rank_set_add(&job->nodes[0].ranks, rank->rank))
        return false;
    for (size_t f = 0; f < observation->nstack; f++) {
        size_t child = child_labelled(job, node, observation->stack[f]);
        if (child == REPORT_MERGE_NONE && (child = add_node(job, node, observation->stack[f])) == REPORT_MERGE_NONE)
            return false;
        if (!report_rank_set_add(&job->nodes[child].ranks, rank->rank))
            return false;
        node = child;
    }
    rank->leaf = node;
    return report_rank_set_add(&job->nodes[node].ends, rank->rank);
}

/* Smaller rank sets first, then by their lowest rank: the unusual branch is read before the common one. */
static bool smaller_branch(const struct report_merge_node *a, const struct report_merge_node *b)
{
    if (a->ranks.count != b->ranks.count)
        return a->ranks.count < b->ranks.count;
    return a->ranks.ranks[0] < b->ranks.ranks[0];
}

/* Relinks every node's children in the order smaller_branch gives (insertion sort: few children, mostly sorted). */
static void sort_children(struct report_merge_job *job)
{
    for (size_t n = 0; n < job->nnodes; n++) {
        size_t sorted = REPORT_MERGE_NONE, child = job->nodes[n].first_child;
        while (child != REPORT_MERGE_NONE) {
            size_t next = job->nodes[child].next_sibling;
            size_t *link = &sorted;
            while (*link != REPORT_MERGE_NONE && !smaller_branch(&job->nodes[child], &job->nodes[*link]))
                link = &job->nodes[*link].next_sibling;
            job->nodes[child].next_sibling = *link;
            *link = child;
            child = next;
        }
        job->nodes[n].first_child = sorted;
    }
}

/* ---- classes ---- */

enum report_hung report_merge_hung_by_itself(const struct report_merge_local_verdict *verdict)
{
    return verdict->spins_in_collective ? REPORT_HUNG_NO : verdict->hung;
}

/* Two ranks say the same of themselves: neither hung by itself (or both could not tell), or both hung by the same
 * cause and root cause. */
static bool same_local_verdict(const struct report_merge_local_verdict *a, const struct report_merge_local_verdict *b)
{
    enum report_hung a_hung = report_merge_hung_by_itself(a), b_hung = report_merge_hung_by_itself(b);
    if (a_hung != b_hung)
        return false;
    if (a_hung != REPORT_HUNG_YES)
        return true;
    return a->cause == b->cause && ((!a->root_cause && !b->root_cause) ||
                                    (a->root_cause && b->root_cause && strcmp(a->root_cause, b->root_cause) == 0));
}

static bool assign_class(struct report_merge *merge, struct report_merge_job *job, size_t rank_index)
{
    struct report_merge_rank *rank = &job->ranks[rank_index];
    const struct report_merge_local_verdict *verdict = &merge->observations[rank->latest].verdict;
    struct report_merge_node *leaf = &job->nodes[rank->leaf];
    size_t found = leaf->first_class;
    while (found != REPORT_MERGE_NONE) {
        const struct report_merge_class *candidate = &job->classes[found];
        if (same_local_verdict(&merge->observations[job->ranks[candidate->representative].latest].verdict, verdict))
            break;
        found = candidate->next_in_leaf;
    }
    if (found == REPORT_MERGE_NONE) {
        if (!report_merge_grow((void **)&job->classes, &job->classes_capacity, job->nclasses, sizeof *job->classes))
            return false;
        found = job->nclasses++;
        job->classes[found] = (struct report_merge_class){ .leaf = rank->leaf, .representative = rank_index,
                                                           .next_in_leaf = leaf->first_class };
        leaf->first_class = found;
    }
    struct report_merge_class *class = &job->classes[found];
    rank->class_id = found;
    struct report_rank_set *over_time = rank->unchanged == 1 ? &class->unchanged
                                        : rank->unchanged == 0 ? &class->changed : NULL;
    return report_rank_set_add(&class->ranks, rank->rank) && (!over_time || report_rank_set_add(over_time, rank->rank));
}

static int compare_classes(const void *a, const void *b)
{
    const struct report_merge_class *x = a, *y = b;
    if (x->ranks.count != y->ranks.count)
        return x->ranks.count < y->ranks.count ? -1 : 1;
    return x->ranks.ranks[0] < y->ranks.ranks[0] ? -1 : x->ranks.ranks[0] > y->ranks.ranks[0];
}

HD_KEY_COMPARATOR(compare_rank, int, struct report_merge_rank, .rank)

size_t report_merge_rank_index(const struct report_merge_job *job, int rank)
{
    size_t low = hd_lower_bound(&rank, job->ranks, job->nranks, sizeof *job->ranks, compare_rank);
    return low < job->nranks && job->ranks[low].rank == rank ? low : REPORT_MERGE_NONE;
}

static bool class_hung(const struct report_merge *merge, const struct report_merge_job *job,
                       const struct report_merge_class *class)
{
    const struct report_merge_observation *representative = &merge->observations[job->ranks[class->representative].latest];
    return report_merge_hung_by_itself(&representative->verdict) == REPORT_HUNG_YES;
}

/* Sorts the classes, the smallest first, and marks the most common one: the largest, and among equals the one whose
 * ranks are not hung by themselves, then the one with the lowest rank. */
static void rank_classes(struct report_merge *merge, struct report_merge_job *job)
{
    qsort(job->classes, job->nclasses, sizeof *job->classes, compare_classes);
    size_t best = REPORT_MERGE_NONE;
    for (size_t c = 0; c < job->nclasses; c++) {
        struct report_merge_class *class = &job->classes[c];
        for (size_t r = 0; r < class->ranks.count; r++) {
            size_t index = report_merge_rank_index(job, class->ranks.ranks[r]);
            job->ranks[index].class_id = c;
            if (r == 0)
                class->representative = index;
        }
        bool hung = class_hung(merge, job, class);
        if (best == REPORT_MERGE_NONE || class->ranks.count > job->classes[best].ranks.count ||
            (class->ranks.count == job->classes[best].ranks.count && !hung && class_hung(merge, job, &job->classes[best])))
            best = c;
    }
    job->most_common = best;
    for (size_t c = 0; c < job->nclasses; c++) {
        job->classes[c].most_common = c == best;
        job->classes[c].outlier = c != best && job->nclasses > 1;
    }
}

static bool build_job(struct report_merge *merge, struct report_merge_job *job)
{
    if (add_node(job, REPORT_MERGE_NONE, NULL) == REPORT_MERGE_NONE)
        return false;
    for (size_t r = 0; r < job->nranks; r++)
        if (!place_rank(job, &job->ranks[r], &merge->observations[job->ranks[r].latest]))
            return false;
    sort_children(job);
    for (size_t r = 0; r < job->nranks; r++)
        if (!assign_class(merge, job, r))
            return false;
    rank_classes(merge, job);
    if (!report_merge_tabulate_calls(merge, job))
        return false;
    if (job->world_size >= 0 && !report_rank_set_complement(&job->seen, job->world_size, &job->missing))
        return false;
    /* a rank at or above WORLD_SIZE: the job's size is not what its ranks say */
    if (job->world_size >= 0 && job->seen.count && job->seen.ranks[job->seen.count - 1] >= job->world_size)
        return report_merge_add_note(merge, NULL, "rank %d is not below WORLD_SIZE %d",
                                     job->seen.ranks[job->seen.count - 1], job->world_size);
    return true;
}

bool report_merge_build_jobs(struct report_merge *merge)
{
    merge->order = malloc((merge->nobservations ? merge->nobservations : 1) * sizeof *merge->order);
    if (!merge->order)
        return false;
    for (size_t i = 0; i < merge->nobservations; i++)
        merge->order[i] = i;
    qsort_r(merge->order, merge->nobservations, sizeof *merge->order, compare_observations, merge);
    if (!build_rank_tables(merge))
        return false;
    for (size_t j = 0; j < merge->njobs; j++)
        if (!build_job(merge, &merge->jobs[j]))
            return false;
    return true;
}
