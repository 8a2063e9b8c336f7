/* libFuzzer harness: the escaping every target string goes through on its way into the text report
 * (analysis/buffer.h) and the exact form of the JSON report (render/json_writer.h). The text form must hold no control
 * byte and no bidirectional override; the JSON form must hold no byte below 0x20. */
#include "buffer.h"
#include "json_writer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct report_buffer escaped = { 0 };
    report_buffer_escaped(&escaped, (const char *)data, size);
    for (size_t i = 0; i < escaped.length; i++) {
        unsigned char byte = (unsigned char)escaped.data[i];
        if (byte < 0x20 || byte == 0x7f)
            abort();
        if (i + 2 < escaped.length && byte == 0xe2 && (unsigned char)escaped.data[i + 1] == 0x80 &&
            (unsigned char)escaped.data[i + 2] >= 0xaa && (unsigned char)escaped.data[i + 2] <= 0xae)
            abort();
    }
    report_buffer_release(&escaped);

    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    if (!out)
        return 0;
    struct report_json *json = malloc(sizeof *json);
    if (json) {
        report_json_start(json, out, false);
        report_json_bytes(json, NULL, (const char *)data, size);
        if (!report_json_finish(json))
            abort();
        free(json);
    }
    fclose(out);
    for (size_t i = 0; i < length; i++)
        if ((unsigned char)text[i] < 0x20)
            abort();
    free(text);
    return 0;
}
