/* Rust symbol names made readable (rust_demangle.h). */
#include "rust_demangle.h"

#include "util.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- legacy: C++'s mangling, a hash segment and escapes ----------------------------------------------------- */

#define LEGACY_HASH_DIGITS 16

bool probe_rust_is_legacy(const char *name)
{
    size_t length = strlen(name);
    if (length < 3 + LEGACY_HASH_DIGITS)
        return false;
    const char *hash = name + length - LEGACY_HASH_DIGITS - 3;
    if (strncmp(hash, "::h", 3) != 0)
        return false;
    for (size_t i = 3; i < 3 + LEGACY_HASH_DIGITS; i++)
        if (!isxdigit((unsigned char)hash[i]))
            return false;
    return true;
}

static const struct {
    const char *escape;
    char character;
} legacy_escapes[] = {
    { "$SP$", '@' }, { "$BP$", '*' }, { "$RF$", '&' }, { "$LT$", '<' }, { "$GT$", '>' },
    { "$LP$", '(' }, { "$RP$", ')' }, { "$C$", ',' },
};

/* The value of hex digit `c` (isxdigit). */
static unsigned hex_value(char c)
{
    return isdigit((unsigned char)c) ? (unsigned)(c - '0') : (unsigned)(tolower((unsigned char)c) - 'a' + 10);
}

/* "$u7b$": a character by its code, printable ASCII only */
static bool unicode_escape(const char *at, char *character, size_t *length)
{
    if (at[0] != '$' || at[1] != 'u')
        return false;
    unsigned value = 0;
    size_t i = 2;
    for (; isxdigit((unsigned char)at[i]) && i < 6; i++)
        value = value * 16 + hex_value(at[i]);
    if (i == 2 || at[i] != '$' || value < 0x20 || value > 0x7e)
        return false;
    *character = (char)value;
    *length = i + 1;
    return true;
}

void probe_rust_tidy_legacy(char *name)
{
    if (!probe_rust_is_legacy(name))
        return;
    name[strlen(name) - LEGACY_HASH_DIGITS - 3] = '\0';
    char *out = name;
    bool segment_start = true;
    for (const char *in = name; *in;) {
        if ((in[0] == ':' && in[1] == ':') || (in[0] == '.' && in[1] == '.')) {
            *out++ = ':';
            *out++ = ':';
            in += 2;
            segment_start = true;
            continue;
        }
        /* a segment that starts with an escape is written "_$...": the '_' is only there for C++'s sake */
        if (segment_start && in[0] == '_' && in[1] == '$')
            in++;
        segment_start = false;
        bool replaced = false;
        for (size_t e = 0; e < COUNT(legacy_escapes) && !replaced; e++) {
            size_t length = strlen(legacy_escapes[e].escape);
            if (strncmp(in, legacy_escapes[e].escape, length) == 0) {
                *out++ = legacy_escapes[e].character;
                in += length;
                replaced = true;
            }
        }
        char character;
        size_t length;
        if (replaced)
            continue;
        if (unicode_escape(in, &character, &length)) {
            *out++ = character;
            in += length;
        } else {
            *out++ = *in++;
        }
    }
    *out = '\0';
}

/* ---- v0 -------------------------------------------------------------------------------------------------------- */

#define V0_DEPTH_MAX 64
#define V0_OUTPUT_MAX 4096
/* Backrefs may point at one place many times over, so a short name can make the depth-capped walk exponential: a
 * budget of steps (far above any real name's) ends it. */
#define V0_STEPS_MAX 20000

struct v0 {
    const char *text; /* after "_R": backrefs count from here */
    size_t length, next;
    unsigned depth;
    unsigned steps;
    unsigned muted; /* inside a path that is read but not shown (an impl's own path) */
    bool bad;
    char out[V0_OUTPUT_MAX];
    size_t written;
    bool truncated;
};

static void emit_bytes(struct v0 *p, const char *bytes, size_t length)
{
    for (size_t i = 0; i < length && !p->muted; i++) {
        if (p->written + 1 >= sizeof p->out) {
            p->truncated = true;
            return;
        }
        unsigned char byte = (unsigned char)bytes[i];
        p->out[p->written++] = byte >= 0x20 && byte != 0x7f ? (char)byte : '?';
    }
}

static void emit(struct v0 *p, const char *text)
{
    emit_bytes(p, text, strlen(text));
}

static char peek(const struct v0 *p)
{
    return p->next < p->length ? p->text[p->next] : '\0';
}

static bool eat(struct v0 *p, char c)
{
    if (peek(p) != c || c == '\0')
        return false;
    p->next++;
    return true;
}

/* Base 62 with a closing '_': "_" is 0, "<digits>_" their value + 1. */
static uint64_t integer_62(struct v0 *p)
{
    if (eat(p, '_'))
        return 0;
    uint64_t value = 0;
    while (!p->bad) {
        char c = peek(p);
        unsigned digit;
        if (c >= '0' && c <= '9')
            digit = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'z')
            digit = 10 + (unsigned)(c - 'a');
        else if (c >= 'A' && c <= 'Z')
            digit = 36 + (unsigned)(c - 'A');
        else
            break;
        p->next++;
        if (value > (UINT64_MAX - 1 - digit) / 62)
            p->bad = true;
        value = value * 62 + digit;
    }
    if (!eat(p, '_'))
        p->bad = true;
    return p->bad ? 0 : value + 1;
}

/* An optional tag and base-62 number: 0 when absent, else the number + 1. */
static uint64_t optional_62(struct v0 *p, char tag)
{
    if (!eat(p, tag))
        return 0;
    uint64_t value = integer_62(p);
    return value < UINT64_MAX ? value + 1 : value;
}

struct identifier {
    const char *bytes;
    size_t length;
};

static struct identifier identifier(struct v0 *p)
{
    struct identifier id = { "", 0 };
    optional_62(p, 's'); /* the disambiguator tells apart names a reader does not need told apart */
    eat(p, 'u');          /* Punycode: shown as it is encoded */
    if (!isdigit((unsigned char)peek(p))) {
        p->bad = true;
        return id;
    }
    size_t length = 0;
    if (!eat(p, '0')) /* "0": an empty name; no other length starts with 0 */
        while (isdigit((unsigned char)peek(p)) && length <= p->length)
            length = length * 10 + (size_t)(p->text[p->next++] - '0');
    eat(p, '_');
    if (length > p->length - p->next) {
        p->bad = true;
        return id;
    }
    id.bytes = p->text + p->next;
    id.length = length;
    p->next += length;
    return id;
}

/* One level deeper: false (and the name bad) past the depth cap or the budget of steps. A name whose readable
 * form is already past the output's end is read no further either. */
static bool descend(struct v0 *p)
{
    if (++p->depth > V0_DEPTH_MAX || ++p->steps > V0_STEPS_MAX)
        p->bad = true;
    return !p->bad && !p->truncated;
}

/* The next element of a list closed by 'E', with `separator` before all but the first: false at its end, at a
 * name cut short (marked bad), or once the readable form fills the output (nothing after it would be shown, and
 * an element not read would be read again for ever). */
static bool next_in_list(struct v0 *p, size_t n, const char *separator)
{
    if (p->bad || p->truncated || eat(p, 'E'))
        return false;
    if (peek(p) == '\0') {
        p->bad = true;
        return false;
    }
    if (n)
        emit(p, separator);
    return true;
}

static void path(struct v0 *p, bool in_value);
static void type(struct v0 *p);

/* "B<n>": go back to position n (before this one), parse there with `parse`, come back. */
static void backref(struct v0 *p, void (*parse)(struct v0 *, bool), bool in_value)
{
    size_t start = p->next - 1;
    uint64_t target = integer_62(p);
    if (!p->bad && target >= start)
        p->bad = true; /* a backref points back, never at itself or ahead */
    if (p->bad || !descend(p))
        return;
    size_t resume = p->next;
    p->next = (size_t)target;
    parse(p, in_value);
    p->next = resume;
    p->depth--;
}

static void type_as_path(struct v0 *p, bool in_value)
{
    (void)in_value;
    type(p);
}

static void generic_arguments(struct v0 *p);

static void path(struct v0 *p, bool in_value)
{
    if (!descend(p))
        return;
    char tag = peek(p);
    p->next++;
    switch (tag) {
    case 'C': {
        struct identifier crate = identifier(p);
        emit_bytes(p, crate.bytes, crate.length);
        break;
    }
    case 'N': {
        char space = peek(p);
        p->next++;
        if (!isalpha((unsigned char)space)) {
            p->bad = true;
            break;
        }
        path(p, in_value);
        uint64_t disambiguator = optional_62(p, 's');
        struct identifier name = identifier(p);
        if (isupper((unsigned char)space)) {
            char number[32];
            char other[2] = { space, '\0' };
            emit(p, "::{");
            emit(p, space == 'C' ? "closure" : space == 'S' ? "shim" : other);
            if (name.length) {
                emit(p, ":");
                emit_bytes(p, name.bytes, name.length);
            }
            snprintf(number, sizeof number, "#%llu}", (unsigned long long)disambiguator);
            emit(p, number);
        } else if (name.length) {
            emit(p, "::");
            emit_bytes(p, name.bytes, name.length);
        }
        break;
    }
    case 'M': { /* <Type> */
        optional_62(p, 's');
        p->muted++; /* the impl's own path (where it was written) is not part of the readable name */
        path(p, false);
        p->muted--;
        emit(p, "<");
        type(p);
        emit(p, ">");
        break;
    }
    case 'X': /* <Type as Trait> */
    case 'Y': {
        if (tag == 'X') {
            optional_62(p, 's');
            p->muted++; /* the impl's path is not part of the readable name */
            path(p, false);
            p->muted--;
        }
        emit(p, "<");
        type(p);
        emit(p, " as ");
        path(p, false);
        emit(p, ">");
        break;
    }
    case 'I':
        path(p, in_value);
        emit(p, in_value ? "::<" : "<");
        generic_arguments(p);
        emit(p, ">");
        break;
    case 'B':
        backref(p, path, in_value);
        break;
    default:
        p->bad = true;
    }
    p->depth--;
}

static void lifetime(struct v0 *p)
{
    integer_62(p);
    emit(p, "'_");
}

static void constant(struct v0 *p);

static void generic_arguments(struct v0 *p)
{
    for (size_t n = 0; next_in_list(p, n, ", "); n++) {
        if (eat(p, 'L'))
            lifetime(p);
        else if (eat(p, 'K'))
            constant(p);
        else
            type(p);
    }
}

static const struct {
    char tag;
    const char *name;
} basic_types[] = {
    { 'a', "i8" },    { 'b', "bool" }, { 'c', "char" }, { 'd', "f64" },  { 'e', "str" }, { 'f', "f32" },
    { 'h', "u8" },    { 'i', "isize" }, { 'j', "usize" }, { 'l', "i32" }, { 'm', "u32" }, { 'n', "i128" },
    { 'o', "u128" },  { 's', "i16" },  { 't', "u16" },  { 'u', "()" },   { 'v', "..." }, { 'x', "i64" },
    { 'y', "u64" },   { 'z', "!" },    { 'p', "_" },
};

static const char *basic_type(char tag)
{
    for (size_t i = 0; i < COUNT(basic_types); i++)
        if (basic_types[i].tag == tag)
            return basic_types[i].name;
    return NULL;
}

static void binder(struct v0 *p)
{
    if (eat(p, 'G'))
        integer_62(p);
}

static void function_signature(struct v0 *p)
{
    binder(p);
    if (eat(p, 'U'))
        emit(p, "unsafe ");
    if (eat(p, 'K')) {
        emit(p, "extern \"");
        if (eat(p, 'C'))
            emit(p, "C");
        else {
            struct identifier abi = identifier(p);
            for (size_t i = 0; i < abi.length; i++)
                emit_bytes(p, abi.bytes[i] == '_' ? "-" : abi.bytes + i, 1);
        }
        emit(p, "\" ");
    }
    emit(p, "fn(");
    for (size_t n = 0; next_in_list(p, n, ", "); n++)
        type(p);
    emit(p, ")");
    if (peek(p) == 'u') {
        p->next++; /* returns () */
    } else {
        emit(p, " -> ");
        type(p);
    }
}

static void dyn_bounds(struct v0 *p)
{
    binder(p);
    emit(p, "dyn ");
    for (size_t n = 0; next_in_list(p, n, " + "); n++) {
        path(p, false);
        /* associated types' bindings join the trait's generic arguments: FnOnce<(), Output = ()> */
        for (size_t b = 0; !p->bad && eat(p, 'p'); b++) {
            struct identifier name = identifier(p);
            if (b > 0)
                emit(p, ", ");
            else if (p->written > 0 && p->out[p->written - 1] == '>' && !p->truncated && !p->muted) {
                p->written--;
                emit(p, ", ");
            } else
                emit(p, "<");
            emit_bytes(p, name.bytes, name.length);
            emit(p, " = ");
            type(p);
            if (peek(p) != 'p')
                emit(p, ">");
        }
    }
    if (eat(p, 'L'))
        integer_62(p);
}

static void type(struct v0 *p)
{
    if (!descend(p))
        return;
    char tag = peek(p);
    const char *basic = basic_type(tag);
    if (basic) {
        p->next++;
        emit(p, basic);
    } else if (tag == 'R' || tag == 'Q') {
        p->next++;
        if (eat(p, 'L'))
            integer_62(p);
        emit(p, tag == 'R' ? "&" : "&mut ");
        type(p);
    } else if (tag == 'P' || tag == 'O') {
        p->next++;
        emit(p, tag == 'P' ? "*const " : "*mut ");
        type(p);
    } else if (tag == 'A' || tag == 'S') {
        p->next++;
        emit(p, "[");
        type(p);
        if (tag == 'A') {
            emit(p, "; ");
            constant(p);
        }
        emit(p, "]");
    } else if (tag == 'T') {
        p->next++;
        emit(p, "(");
        size_t n = 0;
        for (; next_in_list(p, n, ", "); n++)
            type(p);
        emit(p, n == 1 ? ",)" : ")");
    } else if (tag == 'F') {
        p->next++;
        function_signature(p);
    } else if (tag == 'D') {
        p->next++;
        dyn_bounds(p);
    } else if (tag == 'B') {
        p->next++;
        backref(p, type_as_path, false);
    } else {
        path(p, false);
    }
    p->depth--;
}

static void constant_as_path(struct v0 *p, bool in_value)
{
    (void)in_value;
    constant(p);
}

/* An integer, bool or char constant (an array's length, a const generic); anything else is not read. */
static void constant(struct v0 *p)
{
    if (!descend(p))
        return;
    char tag = peek(p);
    p->next++;
    if (tag == 'p') {
        emit(p, "_");
    } else if (tag == 'B') {
        backref(p, constant_as_path, false);
    } else if (tag != '\0' && strchr("abchijlmnostxy", tag)) {
        bool negative = eat(p, 'n');
        uint64_t value = 0;
        size_t digits = 0;
        while (isxdigit((unsigned char)peek(p)) && !p->bad) {
            char c = p->text[p->next++];
            if (++digits > 16) {
                p->bad = true;
                break;
            }
            value = value * 16 + hex_value(c);
        }
        if (!eat(p, '_'))
            p->bad = true;
        char text[32];
        if (tag == 'b')
            snprintf(text, sizeof text, "%s", value ? "true" : "false");
        else if (tag == 'c' && value >= 0x20 && value < 0x7f)
            snprintf(text, sizeof text, "'%c'", (char)value);
        else
            snprintf(text, sizeof text, "%s%llu", negative ? "-" : "", (unsigned long long)value);
        emit(p, text);
    } else {
        p->bad = true;
    }
    p->depth--;
}

char *probe_rust_demangle_v0(const char *mangled)
{
    if (strncmp(mangled, "_R", 2) != 0)
        return NULL;
    struct v0 *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->text = mangled + 2;
    p->length = strcspn(p->text, "."); /* ".llvm.123" and the like: LLVM's, not Rust's */
    while (isdigit((unsigned char)peek(p))) /* the encoding version */
        p->next++;
    if (!isupper((unsigned char)peek(p)))
        p->bad = true;
    else
        path(p, true);
    char *readable = NULL;
    if (!p->bad && p->written > 0) {
        if (p->truncated && p->written > 3)
            memcpy(p->out + p->written - 3, "...", 3);
        p->out[p->written] = '\0';
        readable = strdup(p->out);
    }
    free(p);
    return readable;
}
