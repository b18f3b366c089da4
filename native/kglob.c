/* Shell pattern matching of one name (no '/' handling), with bash's rules for bracket
 * expressions in the C locale: `[!..]`/`[^..]`, `]` first is literal, byte-order ranges, an
 * inverted range matches nothing, POSIX classes (ASCII only), `[=c=]` and single-byte `[.c.]`,
 * backslash escapes, and an unterminated `[` stands for a literal `[`.
 *
 * Matching walks the pattern once per name with one backtrack point (the latest `*`), as bash
 * does since it took glibc's trick, so `*a*a*a*b` costs O(len(pattern) * len(name)).
 */
#include <string.h>

#include "knative.h"

#define NOMATCH ((size_t)-1)
#define NONE ((size_t)-1)
/* Byte at i, or 0 past the end: bash reads patterns as C strings and a NUL ends them. */
#define AT(i) ((size_t)(i) < pn ? p[(i)] : 0u)

typedef const unsigned char uc;

enum { CC_ALNUM, CC_ALPHA, CC_ASCII, CC_BLANK, CC_CNTRL, CC_DIGIT, CC_GRAPH, CC_LOWER,
       CC_PRINT, CC_PUNCT, CC_SPACE, CC_UPPER, CC_WORD, CC_XDIGIT, CC_COUNT };

static const char *const cclass_names[CC_COUNT] = {
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower",
    "print", "punct", "space", "upper", "word", "xdigit",
};

/* ASCII classification, independent of the process locale (bytes >= 0x80 are in no class). */
static int cclass_test(int cls, unsigned c)
{
    int upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z';
    int digit = c >= '0' && c <= '9';
    int graph = c >= 0x21 && c <= 0x7e;

    switch (cls) {
    case CC_ALNUM: return upper || lower || digit;
    case CC_ALPHA: return upper || lower;
    case CC_ASCII: return c < 0x80;
    case CC_BLANK: return c == ' ' || c == '\t';
    case CC_CNTRL: return c < 0x20 || c == 0x7f;
    case CC_DIGIT: return digit;
    case CC_GRAPH: return graph;
    case CC_LOWER: return lower;
    case CC_PRINT: return graph || c == ' ';
    case CC_PUNCT: return graph && !(upper || lower || digit);
    case CC_SPACE: return c == ' ' || (c >= '\t' && c <= '\r');
    case CC_UPPER: return upper;
    case CC_WORD: return upper || lower || digit || c == '_';
    case CC_XDIGIT: return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }
    return 0;
}

/* Class named by s[0..n) after removing backslashes (as bash dequotes it), or -1. */
static int cclass_lookup(uc *s, size_t n)
{
    char name[8];
    size_t i = 0, j = 0;
    int k;

    while (i < n) {
        if (s[i] == '\\' && ++i == n)
            break;
        if (j == sizeof name - 1)
            return -1;
        name[j++] = (char)s[i++];
    }
    name[j] = '\0';
    for (k = 0; k < CC_COUNT; k++)
        if (strcmp(name, cclass_names[k]) == 0)
            return k;
    return -1;
}

/* `[.x.]` starting with i at the '.': sets *val to the byte (single-byte names only, else -1)
 * and returns the index after ".]", or the end of the pattern when it is unterminated. */
static size_t collsym(uc *p, size_t pn, size_t i, int *val)
{
    size_t k = 0;

    i++;
    while (AT(i + k) != 0 && !(AT(i + k) == '.' && AT(i + k + 1) == ']'))
        k++;
    if (AT(i + k) == 0) {
        *val = -1;
        return i + k;
    }
    *val = k == 1 ? (int)p[i] : -1;
    return i + k + 2;
}

/* Match `test` against the bracket expression whose body starts at p[i] (just after '[').
 * Returns the pattern index after the expression, or NOMATCH. When the expression is not
 * terminated, the '[' is literal: the result is i (a match) iff test is '['. */
static size_t bracket(uc *p, size_t pn, size_t i, unsigned test)
{
    const size_t savep = i;
    const size_t lit = test == '[' ? savep : NOMATCH;
    int neg = 0, cstart, cend;
    unsigned c;

    if (AT(i) == '!' || AT(i) == '^') {
        neg = 1;
        i++;
    }
    c = AT(i);
    i++;
    for (;;) {
        int isrange = 0;

        cstart = (int)c;
        if (c == '[' && AT(i) == '=' && AT(i + 2) == '=' && AT(i + 3) == ']') {
            unsigned ec = AT(i + 1);

            i += 4;
            if (test == ec) {
                i++;
                goto matched;
            }
            c = AT(i);
            i++;
            if (c == 0)
                return lit;
            continue;
        }
        if (c == '[' && AT(i) == ':') {
            size_t close = i + 1;
            int hit = 0;

            while (AT(close) != 0 && !(AT(close) == ':' && AT(close + 1) == ']'))
                close++;
            if (AT(close) != 0) {
                int cls = cclass_lookup(p + i + 1, close - i - 1);

                hit = cls >= 0 && cclass_test(cls, test);
                i = close + 2;
            }
            if (hit) {
                i++;
                goto matched;
            }
            c = AT(i);
            i++;
            if (c == 0)
                return lit;
            if (c == ']')
                break;
            continue;
        }
        if (c == '[' && AT(i) == '.') {
            int v;

            i = collsym(p, pn, i, &v);
            cstart = v < 0 ? (int)test + 1 : v; /* an invalid symbol matches nothing */
        }
        if (c == '\\') {
            if (AT(i) == 0)
                return NOMATCH;
            cstart = (int)AT(i);
            i++;
        }
        cend = cstart;
        if (c == 0)
            return lit;
        c = AT(i);
        i++;
        if (c == 0)
            return lit;
        if (c == '-' && AT(i) != ']') {
            unsigned e = AT(i);

            i++;
            if (e == '\\') {
                e = AT(i);
                i++;
            }
            if (e == 0)
                return NOMATCH;
            cend = (int)e;
            if (e == '[' && AT(i) == '.') {
                int v;

                i = collsym(p, pn, i, &v);
                cend = v < 0 ? (int)test - 1 : v;
            }
            c = AT(i);
            i++;
            if (cstart > cend) { /* an inverted range is invalid and matches nothing */
                if (c == ']')
                    break;
                continue;
            }
            isrange = 1;
        }
        if (!isrange && (int)test == cstart)
            goto matched;
        if (isrange && (int)test >= cstart && (int)test <= cend)
            goto matched;
        if (c == ']')
            break;
    }
    return neg ? i : NOMATCH;

matched:
    /* Skip the rest of the expression, still watching for a missing ']'. */
    {
        size_t brchr = NONE;
        int brcnt = 1;

        i--;
        c = AT(i);
        while (brcnt > 0) {
            unsigned oc;

            if (c == 0)
                return lit;
            oc = c;
            c = AT(i);
            i++;
            if (c == '[' && (AT(i) == '=' || AT(i) == ':' || AT(i) == '.')) {
                brcnt++;
                brchr = i;
                i++;
                c = AT(i);
                if (c == 0)
                    return lit;
            } else if (c == ']' && brcnt > 1 && brchr != NONE && oc == AT(brchr)) {
                brcnt--;
                brchr = NONE;
            } else if (c == ']' && (brchr == NONE || AT(brchr) != '.')) {
                brcnt = 0;
            } else if (c == '\\') {
                if (AT(i) == 0)
                    return NOMATCH;
                i++;
            }
        }
        return neg ? NOMATCH : i;
    }
}

/* Match one non-star pattern element at p[i] against byte ch: next index or NOMATCH. */
static size_t element(uc *p, size_t pn, size_t i, unsigned ch)
{
    unsigned c = p[i];

    switch (c) {
    case '?':
        return i + 1;
    case '\\':
        if (i + 1 == pn) /* a trailing lone backslash is a literal backslash */
            return ch == '\\' ? i + 1 : NOMATCH;
        return ch == p[i + 1] ? i + 2 : NOMATCH;
    case '[':
        return bracket(p, pn, i + 1, ch);
    default:
        return ch == c ? i + 1 : NOMATCH;
    }
}

/* Leftmost position >= from where the element after a star can start: when that element is a
 * plain byte, skip straight to its next occurrence (what bash's first-byte test does).
 * Returns sn + 1 when there is none, which ends the match. */
static size_t star_start(uc *p, size_t pn, size_t pi, uc *s, size_t sn, size_t from)
{
    unsigned c = p[pi];
    const unsigned char *z;

    if (c == '?' || c == '[' || c == '\\' || from >= sn)
        return from;
    z = memchr(s + from, (int)c, sn - from);
    return z != NULL ? (size_t)(z - s) : sn + 1;
}

static int match(uc *p, size_t pn, uc *s, size_t sn, int period)
{
    size_t pi = 0, si = 0, star_p = NONE, star_s = 0;

    if (period && sn > 0 && s[0] == '.' &&
        !(pn > 0 && (p[0] == '.' || (p[0] == '\\' && pn > 1 && p[1] == '.'))))
        return 0;
    for (;;) {
        if (pi < pn) {
            if (p[pi] == '*') {
                while (pi < pn && p[pi] == '*')
                    pi++;
                if (pi == pn)
                    return 1; /* trailing stars take the rest of the name */
                star_p = pi;
                star_s = si = star_start(p, pn, pi, s, sn, si);
                if (si > sn)
                    return 0;
                continue;
            }
            if (si < sn) {
                size_t r = element(p, pn, pi, s[si]);

                if (r != NOMATCH) {
                    pi = r;
                    si++;
                    continue;
                }
            }
        } else if (si == sn) {
            return 1;
        }
        if (star_p == NONE || star_s >= sn)
            return 0;
        star_s = star_start(p, pn, star_p, s, sn, star_s + 1);
        if (star_s > sn)
            return 0;
        pi = star_p;
        si = star_s;
    }
}

int kglob_match(const char *pat, size_t pn, const char *name, size_t nn, int period)
{
    return match((uc *)pat, pn, (uc *)name, nn, period);
}

size_t kglob_filter(const char *pat, size_t pn, const char *names, size_t total,
                    const size_t *lens, size_t count, int period, unsigned char *hits)
{
    uc *p = (uc *)pat, *s = (uc *)names;
    size_t k, off = 0, matched = 0;
    int short_input = 0;

    for (k = 0; k < count; k++) {
        size_t len;

        if (off > total) { /* fewer names than count: the missing ones are empty */
            off = total;
            short_input = 1;
        }
        if (lens != NULL) {
            len = lens[k] < total - off ? lens[k] : total - off;
        } else {
            const unsigned char *z = off < total ? memchr(s + off, 0, total - off) : NULL;

            len = z != NULL ? (size_t)(z - (s + off)) : total - off;
        }
        hits[k] = (unsigned char)match(p, pn, s + off, len, period);
        matched += hits[k];
        off += len + (lens == NULL);
    }
    if (lens == NULL && count > 0 && (short_input || off != total + 1))
        return (size_t)-1; /* the NULs did not mark exactly `count` names */
    return matched;
}

int kglob_has_magic(const char *pat, size_t pn)
{
    size_t i;

    for (i = 0; i < pn; i++) {
        char c = pat[i];

        if (c == '\\')
            i++;
        else if (c == '*' || c == '?' || c == '[')
            return 1;
    }
    return 0;
}
