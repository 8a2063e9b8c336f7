/* The streaming JSON writer (render/json_writer.h): the exact bytes it writes, read back by json-c. */
#include "json_writer.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct written {
    char *text;
    size_t length;
    FILE *out;
    struct report_json json;
};

static void start(struct written *written, bool pretty)
{
    written->text = NULL;
    written->length = 0;
    written->out = open_memstream(&written->text, &written->length);
    cr_assert_not_null(written->out);
    report_json_start(&written->json, written->out, pretty);
}

/* finishes, closes, and returns whether the writer said it succeeded */
static bool finish(struct written *written)
{
    bool ok = report_json_finish(&written->json);
    fclose(written->out);
    return ok;
}

Test(json_writer, pretty_nesting_empty_containers_and_keys)
{
    struct written w;
    start(&w, true);
    report_json_begin_object(&w.json, NULL);
    report_json_name(&w.json, "schema", "hangdoc.report/2");
    report_json_begin_array(&w.json, "empty");
    report_json_end_array(&w.json);
    report_json_begin_object(&w.json, "nothing");
    report_json_end_object(&w.json);
    report_json_begin_array(&w.json, "pids");
    report_json_int(&w.json, NULL, 4000);
    report_json_pid_or_null(&w.json, NULL, 0);
    report_json_end_array(&w.json);
    report_json_bool(&w.json, "hung", true);
    report_json_end_object(&w.json);
    cr_assert(finish(&w));
    cr_assert_str_eq(w.text, "{\n"
                             "  \"schema\": \"hangdoc.report/2\",\n"
                             "  \"empty\": [],\n"
                             "  \"nothing\": {},\n"
                             "  \"pids\": [\n"
                             "    4000,\n"
                             "    null\n"
                             "  ],\n"
                             "  \"hung\": true\n"
                             "}\n");
    free(w.text);
}

/* A target's bytes keep their exact value: valid UTF-8 as it is (a right-to-left override too: JSON is not a
 * terminal), JSON's escapes for the quote, the backslash and control characters, and each byte that is not valid
 * UTF-8 as U+DC00 + byte, which Python's surrogateescape turns back into the byte. */
Test(json_writer, target_strings_keep_their_exact_value)
{
    struct written w;
    start(&w, false);
    report_json_begin_array(&w.json, NULL);
    report_json_string(&w.json, NULL, "w\"o\\rk\x1b]0;owned\x07\n\t");
    report_json_bytes(&w.json, NULL, "ab\0cd", 5);
    report_json_string(&w.json, NULL, NULL);
    report_json_string_or_null(&w.json, NULL, NULL);
    report_json_string(&w.json, NULL, "\xe2\x80\xae" "cod\xff\xc3(\xed\xa0\x80\x7f");
    report_json_end_array(&w.json);
    cr_assert(finish(&w));
    cr_assert_str_eq(w.text, "[\"w\\\"o\\\\rk\\u001b]0;owned\\u0007\\n\\t\",\"ab\\u0000cd\",\"\",null,"
                             "\"\xe2\x80\xae" "cod\\udcff\\udcc3(\\udced\\udca0\\udc80\\u007f\"]");
    json_object *parsed = json_tokener_parse(w.text);
    cr_assert_not_null(parsed);
    cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(parsed, 0)), "w\"o\\rk\x1b]0;owned\x07\n\t");
    cr_assert_eq(json_object_get_string_len(json_object_array_get_idx(parsed, 1)), 5, "the NUL kept");
    json_object_put(parsed);
    free(w.text);
}

Test(json_writer, hangdocs_own_names_are_quoted_but_not_escaped)
{
    struct written w;
    start(&w, false);
    report_json_begin_object(&w.json, NULL);
    report_json_name(&w.json, "description", "futex wait 0x10 \"q\"");
    report_json_hex(&w.json, "address", 0xffffffffffffffffULL);
    report_json_int(&w.json, "nr", -38);
    report_json_end_object(&w.json);
    cr_assert(finish(&w));
    cr_assert_str_eq(w.text, "{\"description\":\"futex wait 0x10 \\\"q\\\"\",\"address\":\"0xffffffffffffffff\","
                             "\"nr\":-38}");
    free(w.text);
}

/* The shortest decimal that reads back exactly, always with a fraction or exponent; null where JSON has no
 * number. */
Test(json_writer, doubles_round_trip)
{
    static const struct {
        double value;
        const char *text;
    } cases[] = {
        { 0.1, "0.1" }, { 41.0, "41.0" }, { 0.0, "0.0" }, { -2.5, "-2.5" }, { 1e300, "1e+300" },
        { 1796399709.8998373, "1796399709.8998373" }, { 0.33387847799986048, "0.33387847799986048" },
        { NAN, "null" }, { INFINITY, "null" }, { -INFINITY, "null" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct written w;
        start(&w, false);
        report_json_double(&w.json, NULL, cases[i].value);
        cr_assert(finish(&w));
        cr_assert_str_eq(w.text, cases[i].text, "case %zu", i);
        if (isfinite(cases[i].value))
            cr_assert_eq(strtod(w.text, NULL), cases[i].value, "case %zu reads back", i);
        free(w.text);
    }
}

/* Output larger than the write buffer, and a single value larger than it, arrive whole and in order. */
Test(json_writer, long_output_arrives_whole)
{
    size_t long_length = 100000;
    char *long_text = malloc(long_length + 1);
    memset(long_text, 'x', long_length);
    long_text[long_length] = '\0';
    struct written w;
    start(&w, true);
    report_json_begin_array(&w.json, NULL);
    for (int i = 0; i < 5000; i++)
        report_json_int(&w.json, NULL, i);
    report_json_string(&w.json, NULL, long_text);
    report_json_end_array(&w.json);
    cr_assert(finish(&w));
    json_object *parsed = json_tokener_parse(w.text);
    cr_assert_not_null(parsed);
    cr_assert_eq(json_object_array_length(parsed), 5001);
    cr_assert_eq(json_object_get_int(json_object_array_get_idx(parsed, 4999)), 4999);
    cr_assert_eq(strlen(json_object_get_string(json_object_array_get_idx(parsed, 5000))), long_length);
    json_object_put(parsed);
    free(w.text);
    free(long_text);
}

/* A renderer's bug (an unclosed container, one closed too many, nesting past the limit) fails the document
 * instead of passing for a report. */
Test(json_writer, unbalanced_documents_fail)
{
    struct written w;
    start(&w, false);
    report_json_begin_object(&w.json, NULL);
    cr_assert_not(finish(&w), "left open");
    free(w.text);

    start(&w, false);
    report_json_begin_array(&w.json, NULL);
    report_json_end_array(&w.json);
    report_json_end_array(&w.json);
    cr_assert_not(finish(&w), "closed twice");
    free(w.text);

    start(&w, false);
    for (int depth = 0; depth <= REPORT_JSON_DEPTH_MAX; depth++)
        report_json_begin_array(&w.json, NULL);
    for (int depth = 0; depth <= REPORT_JSON_DEPTH_MAX; depth++)
        report_json_end_array(&w.json);
    cr_assert_not(finish(&w), "too deep");
    free(w.text);
}
