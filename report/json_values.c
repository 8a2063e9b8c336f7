/* JSON values the renderers share (json_values.h). */
#include "json_values.h"

#include "buffer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

json_object *report_json_string(const char *text)
{
    char *escaped = report_escape(text ? text : "");
    json_object *value = json_object_new_string(escaped ? escaped : "");
    free(escaped);
    return value;
}

json_object *report_json_string_or_null(const char *text)
{
    return text ? report_json_string(text) : NULL;
}

json_object *report_json_hex(uint64_t value)
{
    char text[24];
    snprintf(text, sizeof text, "0x%" PRIx64, value);
    return json_object_new_string(text);
}
