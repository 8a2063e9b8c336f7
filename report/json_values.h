/* JSON values the renderers share (render_json.c, render_stacks.c, render_inheritance.c): every string through the
 * escaping of buffer.h, addresses as "0x..." text (JSON numbers lose precision past 2^53). */
#pragma once

#include <json-c/json.h>
#include <stdint.h>

/* The escaped string; "" for NULL. */
json_object *report_json_string(const char *text);
/* The escaped string, or JSON null for NULL. */
json_object *report_json_string_or_null(const char *text);
/* "0x1b64e" */
json_object *report_json_hex(uint64_t value);
