/* libFuzzer harness: a --catalogue file (analysis/catalogue.h), a user's file that must give a row or a line number,
 * never a crash; the rows it makes are then matched against a library, a thread and a frame. */
#include "catalogue.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct report_catalogue *catalogue = report_catalogue_new();
    if (catalogue) {
        char error[256];
        report_catalogue_parse(catalogue, text, error, sizeof error);
        struct hd_library library = { .path = (char *)"/usr/lib/libacme.so.1", .soname = (char *)"libacme.so.1" };
        (void)report_catalogue_library(catalogue, &library);
        (void)report_catalogue_thread(catalogue, "acme-io");
        (void)report_catalogue_function(catalogue, "localtime_r");
        report_catalogue_free(catalogue);
    }
    free(text);
    return 0;
}
