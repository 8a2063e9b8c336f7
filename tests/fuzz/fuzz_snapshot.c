/* libFuzzer harness: a snapshot file (record/record.h), hostile input that must be read or refused with a reason,
 * never a crash; a snapshot it accepts is then analysed and rendered in every format, since the rules and the
 * renderers must hold on any snapshot the reader lets through, not only on those probe/ makes. */
#include "record.h"
#include "render_dot.h"
#include "render_markdown.h"
#include "report.h"

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hd_snapshot *snapshot = NULL;
    struct record_analysis settings;
    char error[512];
    if (record_parse(data, size, &snapshot, &settings, error, sizeof error) != 0)
        return 0;
    const struct report_options options = { .stuck_after_s = settings.stuck_after_s };
    struct report_analysis *analysis = report_analyze_with(snapshot, &options);
    FILE *out = fopen("/dev/null", "we");
    if (analysis && out) {
        struct report_text_options text = { .verbose = true, .width = 80 };
        report_render_text(snapshot, analysis, &text, out);
        report_render_json(snapshot, analysis, out);
        report_render_dot(snapshot, analysis, out);
        report_render_markdown(snapshot, analysis, out);
    }
    if (out)
        fclose(out);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
    return 0;
}
