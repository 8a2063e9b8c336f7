/* Unit tests for the report buffer and the escaping of untrusted bytes (analysis/buffer.h). */
#include <criterion/criterion.h>

#include "buffer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- report_escape ------------------------------------------------------------------------------------------- */

static void expect_escape(const char *input, const char *expected)
{
    char *escaped = report_escape(input);
    cr_assert_not_null(escaped);
    cr_assert_str_eq(escaped, expected, "escaping \"%s\"", input);
    free(escaped);
}

/* report_buffer_escaped over bytes that may hold NULs */
static void expect_escaped_bytes(const char *bytes, size_t length, const char *expected)
{
    struct report_buffer buffer = { 0 };
    report_buffer_escaped(&buffer, bytes, length);
    cr_assert_not(buffer.failed);
    cr_assert_not_null(buffer.data);
    cr_assert_str_eq(buffer.data, expected);
    cr_assert_eq(buffer.length, strlen(expected));
    report_buffer_release(&buffer);
}

Test(escape, plain_ascii_unchanged)
{
    expect_escape("hello, world", "hello, world");
    expect_escape("python3 -m http.server 8000 ~!@#$%^&*()_+{}|:\"<>?`-=[];',./",
                  "python3 -m http.server 8000 ~!@#$%^&*()_+{}|:\"<>?`-=[];',./");
    expect_escape(" ", " ");
    expect_escape("~", "~");
}

Test(escape, empty_string)
{
    char *escaped = report_escape("");
    cr_assert_not_null(escaped);
    cr_assert_str_eq(escaped, "");
    free(escaped);
}

Test(escape, newline_tab_carriage_return)
{
    expect_escape("\n\t\r", "\\n\\t\\r");
    expect_escape("a\nb", "a\\nb");
}

Test(escape, escape_character)
{
    expect_escape("\x1b", "\\e");
    expect_escape("\x1b[31mred\x1b[0m", "\\e[31mred\\e[0m");
    expect_escape("\x1b]0;title\x07", "\\e]0;title\\x07");
}

Test(escape, backslash)
{
    expect_escape("\\", "\\\\");
    expect_escape("C:\\x41", "C:\\\\x41");
}

Test(escape, delete)
{
    expect_escape("\x7f", "\\x7f");
}

Test(escape, other_c0_controls)
{
    expect_escape("\x07", "\\x07");
    expect_escape("\x01", "\\x01");
    expect_escape("\x08", "\\x08");
    expect_escape("\x0b\x0c", "\\x0b\\x0c");
    expect_escape("\x1f", "\\x1f");
}

Test(escape, nul_byte)
{
    expect_escaped_bytes("a\0b", 3, "a\\x00b");
}

Test(escape, invalid_utf8_bytes)
{
    expect_escape("\xff\xfe", "\\xff\\xfe");
    expect_escape("a\xff" "b", "a\\xffb");
    expect_escape("\xf8\x88\x80\x80\x80", "\\xf8\\x88\\x80\\x80\\x80"); /* 5-byte form */
}

Test(escape, lone_continuation_bytes)
{
    expect_escape("\x80", "\\x80");
    expect_escape("\xbf" "a", "\\xbfa");
}

Test(escape, truncated_sequence_at_end)
{
    expect_escape("ok\xe6\x97", "ok\\xe6\\x97");
    expect_escape("\xc3", "\\xc3");
    expect_escape("\xf0\x9f\x98", "\\xf0\\x9f\\x98");
}

Test(escape, truncated_sequence_before_ascii)
{
    expect_escape("\xe6\x97" "A", "\\xe6\\x97A");
    expect_escape("\xc3" "A", "\\xc3A");
}

Test(escape, overlong_encodings)
{
    expect_escape("\xc0\xaf", "\\xc0\\xaf");         /* '/' in two bytes */
    expect_escape("\xc1\xbf", "\\xc1\\xbf");         /* DEL in two bytes */
    expect_escape("\xe0\x80\xaf", "\\xe0\\x80\\xaf"); /* '/' in three bytes */
    expect_escape("\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf");
    expect_escape("\xc0\x8a", "\\xc0\\x8a"); /* a newline smuggled as an overlong form */
}

Test(escape, surrogates)
{
    expect_escape("\xed\xa0\x80", "\\xed\\xa0\\x80"); /* U+D800 */
    expect_escape("\xed\xbf\xbf", "\\xed\\xbf\\xbf"); /* U+DFFF */
    expect_escape("\xed\x9f\xbf", "\xed\x9f\xbf");    /* U+D7FF is fine */
}

Test(escape, above_unicode_range)
{
    expect_escape("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* U+110000 */
    expect_escape("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf");     /* U+10FFFF is valid */
}

Test(escape, valid_utf8_unchanged)
{
    expect_escape("é", "é");
    expect_escape("\xc3\xa9", "\xc3\xa9");
    expect_escape("日本", "日本");
    expect_escape("\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac");
    expect_escape("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"); /* U+1F600 */
    expect_escape("caf\xc3\xa9 \xf0\x9f\x94\xa5 \xe6\x97\xa5", "caf\xc3\xa9 \xf0\x9f\x94\xa5 \xe6\x97\xa5");
    expect_escape("\xc2\xa0", "\xc2\xa0"); /* U+00A0, the first code point after the C1 block */
}

Test(escape, c1_controls)
{
    expect_escape("\xc2\x85", "\\xc2\\x85"); /* NEL */
    expect_escape("\xc2\x80", "\\xc2\\x80");
    expect_escape("\xc2\x9b" "31m", "\\xc2\\x9b31m"); /* CSI */
    expect_escape("\xc2\x9f", "\\xc2\\x9f");
}

Test(escape, bidirectional_controls)
{
    expect_escape("\xe2\x80\xae", "\\u{202E}"); /* RLO */
    expect_escape("\xe2\x81\xa6", "\\u{2066}"); /* LRI */
    expect_escape("\xe2\x80\xaa", "\\u{202A}");
    expect_escape("\xe2\x81\xa9", "\\u{2069}");
    expect_escape("abc\xe2\x80\xae" "fdp.exe", "abc\\u{202E}fdp.exe");
}

Test(escape, neighbours_of_bidirectional_controls_unchanged)
{
    expect_escape("\xe2\x80\xa9", "\xe2\x80\xa9"); /* U+2029 */
    expect_escape("\xe2\x80\xaf", "\xe2\x80\xaf"); /* U+202F */
    expect_escape("\xe2\x81\xa5", "\xe2\x81\xa5"); /* U+2065 */
    expect_escape("\xe2\x81\xaa", "\xe2\x81\xaa"); /* U+206A */
}

Test(escape, mixed)
{
    expect_escape("a\\b\n\xff\xe2\x80\xae\xc3\xa9\x1b", "a\\\\b\\n\\xff\\u{202E}\xc3\xa9\\e");
}

Test(escape, escaped_appends_to_existing_content)
{
    struct report_buffer buffer = { 0 };
    report_buffer_puts(&buffer, "name=");
    report_buffer_escaped(&buffer, "x\ny", 3);
    report_buffer_puts(&buffer, ";");
    cr_assert_str_eq(buffer.data, "name=x\\ny;");
    report_buffer_release(&buffer);
}

Test(escape, length_bounds_the_input)
{
    expect_escaped_bytes("abc\n", 3, "abc");
    /* a valid 2-byte sequence cut by the length is invalid */
    expect_escaped_bytes("\xc3\xa9", 1, "\\xc3");
}

/* ---- report_buffer_printf / append --------------------------------------------------------------------------- */

Test(buffer, printf_short)
{
    struct report_buffer buffer = { 0 };
    report_buffer_printf(&buffer, "%d %s", 42, "answer");
    cr_assert_not(buffer.failed);
    cr_assert_str_eq(buffer.data, "42 answer");
    cr_assert_eq(buffer.length, 9);
    report_buffer_release(&buffer);
    cr_assert_null(buffer.data);
    cr_assert_eq(buffer.length, 0);
    cr_assert_eq(buffer.cap, 0);
}

Test(buffer, printf_longer_than_256_bytes)
{
    char long_text[1001];
    for (size_t i = 0; i < 1000; i++)
        long_text[i] = (char)('a' + i % 26);
    long_text[1000] = '\0';

    struct report_buffer buffer = { 0 };
    report_buffer_puts(&buffer, "<");
    report_buffer_printf(&buffer, "[%s|%d]", long_text, 7);
    report_buffer_puts(&buffer, ">");
    cr_assert_not(buffer.failed);

    char expected[1100];
    snprintf(expected, sizeof expected, "<[%s|7]>", long_text);
    cr_assert_eq(buffer.length, strlen(expected));
    cr_assert_str_eq(buffer.data, expected);
    cr_assert_geq(buffer.cap, buffer.length + 1);
    report_buffer_release(&buffer);
}

Test(buffer, printf_exactly_at_the_small_buffer_boundary)
{
    for (int width = 254; width <= 258; width++) {
        struct report_buffer buffer = { 0 };
        report_buffer_printf(&buffer, "%*s", width, "x");
        cr_assert_eq(buffer.length, (size_t)width);
        cr_assert_eq(strlen(buffer.data), (size_t)width);
        cr_assert_eq(buffer.data[width - 1], 'x');
        cr_assert_eq(buffer.data[0], width == 1 ? 'x' : ' ');
        report_buffer_release(&buffer);
    }
}

Test(buffer, printf_long_after_content_grows)
{
    struct report_buffer buffer = { 0 };
    for (int i = 0; i < 50; i++)
        report_buffer_printf(&buffer, "%0300d\n", i);
    cr_assert_not(buffer.failed);
    cr_assert_eq(buffer.length, 50 * 301);
    cr_assert_eq(strlen(buffer.data), buffer.length);
    for (int i = 0; i < 50; i++) {
        char expected[302];
        snprintf(expected, sizeof expected, "%0300d\n", i);
        cr_assert(memcmp(buffer.data + (size_t)i * 301, expected, 301) == 0, "line %d", i);
    }
    report_buffer_release(&buffer);
}

Test(buffer, append_many_times_grows)
{
    struct report_buffer buffer = { 0 };
    for (int i = 0; i < 10000; i++)
        report_buffer_append(&buffer, "abc", 3);
    cr_assert_not(buffer.failed);
    cr_assert_eq(buffer.length, 30000);
    cr_assert_geq(buffer.cap, 30001);
    cr_assert_eq(strlen(buffer.data), 30000);
    for (size_t i = 0; i < buffer.length; i++)
        cr_assert_eq(buffer.data[i], "abc"[i % 3], "byte %zu", i);
    report_buffer_release(&buffer);
}

Test(buffer, append_one_large_block)
{
    size_t size = 1 << 20;
    char *block = malloc(size);
    cr_assert_not_null(block);
    memset(block, 'z', size);
    struct report_buffer buffer = { 0 };
    report_buffer_append(&buffer, "head", 4);
    report_buffer_append(&buffer, block, size);
    cr_assert_not(buffer.failed);
    cr_assert_eq(buffer.length, size + 4);
    cr_assert_eq(buffer.data[buffer.length], '\0');
    cr_assert(memcmp(buffer.data, "head", 4) == 0);
    cr_assert_eq(buffer.data[size + 3], 'z');
    free(block);
    report_buffer_release(&buffer);
}

Test(buffer, append_empty)
{
    struct report_buffer buffer = { 0 };
    report_buffer_append(&buffer, "", 0);
    cr_assert_not(buffer.failed);
    cr_assert_eq(buffer.length, 0);
    cr_assert_not_null(buffer.data);
    cr_assert_str_eq(buffer.data, "");
    report_buffer_release(&buffer);
}

Test(buffer, puts_and_append_partial)
{
    struct report_buffer buffer = { 0 };
    report_buffer_puts(&buffer, "one ");
    report_buffer_append(&buffer, "two three", 3);
    cr_assert_str_eq(buffer.data, "one two");
    cr_assert_eq(buffer.length, 7);
    report_buffer_release(&buffer);
}
