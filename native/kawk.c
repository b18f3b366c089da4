/* awk's record loop, a block at a time: records cut into the fields the rules read, and the
 * numbers in those fields converted, in one call for thousands of records (the per-record
 * Python of kshell/tools/awk costs ten times this). See native.awk_columns. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "knative.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* 10^0 .. 10^22: every one exact as a double. */
static const double POW10[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

#define MANTISSA_MAX ((uint64_t)1 << 53) /* every integer up to it is exact as a double */
#define EXP_CAP 100000                   /* an exponent past it only says "out of range" */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_blank(char c) /* awk's default field separators */
{
    return c == ' ' || c == '\t' || c == '\n';
}

double kawk_number(const char *s, size_t n)
{
    const char *p = s, *end = s + n;
    uint64_t m = 0;
    long e10 = 0;
    size_t idigits = 0, fdigits = 0;
    int neg = 0, big = 0;
    double v;

    while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r')))
        p++;
    if (p < end && (*p == '+' || *p == '-')) {
        neg = *p == '-';
        p++;
    }
    /* m stays <= 2^53, so m * 10 + 9 cannot wrap */
    for (; p < end && is_digit(*p); p++, idigits++) {
        uint64_t t = m * 10 + (uint64_t)(*p - '0');

        if (!big && t <= MANTISSA_MAX) {
            m = t;
            continue;
        }
        if (*p != '0')
            return NAN; /* too many digits for the exact path: the caller converts */
        big = 1;
        e10++; /* a trailing zero of a long integer: 10 times m */
    }
    if (p < end && *p == '.') {
        p++;
        for (; p < end && is_digit(*p); p++, fdigits++) {
            uint64_t t = m * 10 + (uint64_t)(*p - '0');

            if (!big && t <= MANTISSA_MAX) {
                m = t;
                e10--;
                continue;
            }
            if (*p != '0')
                return NAN;
            big = 1; /* a trailing zero after the point changes nothing */
        }
    }
    if (idigits == 0 && fdigits == 0) {
        /* no number: 0, unless it may be "+inf" or "-nan", which the caller reads */
        if (p > s && (p[-1] == '+' || p[-1] == '-') && p < end &&
            ((*p | 0x20) == 'i' || (*p | 0x20) == 'n'))
            return NAN;
        return 0.0;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        const char *q = p + 1;
        int eneg = 0;
        long ex = 0;

        if (q < end && (*q == '+' || *q == '-')) {
            eneg = *q == '-';
            q++;
        }
        if (q < end && is_digit(*q)) {
            for (; q < end && is_digit(*q); q++)
                if (ex < EXP_CAP)
                    ex = ex * 10 + (*q - '0');
            e10 += eneg ? -ex : ex;
        }
    }
    if (m == 0)
        return neg ? -0.0 : 0.0;
    if (e10 < -22 || e10 > 22)
        return NAN;
    /* m and 10^|e10| are exact, so one correctly rounded operation gives the nearest double
     * to m * 10^e10, as strtod and Python's float() do */
    v = e10 >= 0 ? (double)m * POW10[e10] : (double)m / POW10[-e10];
    return neg ? -v : v;
}

/* The first byte of p[0:end-p] that is a or b, or end: 16 bytes at a compare where SSE2 is
 * (the fields of a CSV line are a few bytes long: a byte loop costs twice as much). */
static const char *find2(const char *p, const char *end, char a, char b)
{
#ifdef __SSE2__
    const __m128i va = _mm_set1_epi8(a), vb = _mm_set1_epi8(b);

    for (; end - p >= 16; p += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        int hits = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, va), _mm_cmpeq_epi8(v, vb)));

        if (hits)
            return p + __builtin_ctz((unsigned)hits);
    }
#endif
    while (p < end && *p != a && *p != b)
        p++;
    return p;
}

/* Cut the record starting at *at (ending at the next rs byte or at end) into its fields up
 * to `cuts`: their (start, end) offsets from the record into spans, how many in *found;
 * *at is left past the record's rs. Returns min(number of fields, cuts + 1), or -1 when
 * the record ends at `end` but `last` says it should not (or the other way round). */
static long cut_record(const char **at, const char *end, int rs, int fs, size_t cuts, int last,
                       size_t *spans, size_t *found)
{
    const char *rec = *at, *p = rec, *stop;
    const char r = (char)rs, f = (char)fs;
    size_t k = 0;
    long total;

    if (fs >= 0) {
        spans[0] = 0;
        for (;;) { /* one pass over the bytes: the record's end and its first fields */
            p = find2(p, end, r, f);
            if (p == end || *p == r) {
                if (p > rec) /* an empty record has no field */
                    spans[2 * k++ + 1] = (size_t)(p - rec);
                total = (long)k;
                break;
            }
            spans[2 * k + 1] = (size_t)(p - rec);
            if (++k == cuts) { /* a field, maybe empty, follows: the rest is skipped */
                total = (long)cuts + 1;
                p = memchr(p, r, (size_t)(end - p));
                if (p == NULL)
                    p = end;
                break;
            }
            spans[2 * k] = (size_t)(++p - rec);
        }
    } else {
        for (;;) {
            while (p < end && *p != r && is_blank(*p))
                p++;
            if (p == end || *p == r) {
                total = (long)k;
                break;
            }
            if (k == cuts) {
                total = (long)cuts + 1;
                p = memchr(p, r, (size_t)(end - p));
                if (p == NULL)
                    p = end;
                break;
            }
            spans[2 * k] = (size_t)(p - rec);
            while (p < end && *p != r && !is_blank(*p))
                p++;
            spans[2 * k + 1] = (size_t)(p - rec);
            k++;
        }
    }
    stop = p;
    if ((stop == end) != last)
        return -1; /* not the expected number of records */
    *at = stop + 1;
    *found = k;
    return total;
}

long kawk_columns(const char *text, size_t n, int rs, int fs, size_t count, size_t cuts,
                  const size_t *numf, size_t nnum, const size_t *texf, size_t ntext,
                  double *nums, uint32_t *nf, char *out, size_t *outlen, size_t *spans)
{
    const char *p = text, *end = text + n;
    const char join = fs >= 0 ? (char)fs : ' ';
    size_t r, k, o = 0;
    long unread = 0;

    if (count == 0)
        return -1; /* even an empty text is one record */
    for (r = 0; r < count; r++) {
        const char *rec = p;
        size_t found;
        long total = cut_record(&p, end, rs, fs, cuts, r == count - 1, spans, &found);

        if (total < 0)
            return -1;
        if (nf != NULL)
            nf[r] = total > (long)UINT32_MAX ? UINT32_MAX : (uint32_t)total;
        for (k = 0; k < nnum; k++) {
            size_t j = numf[k];
            double v = 0.0;

            if (j < found) {
                v = kawk_number(rec + spans[2 * j], spans[2 * j + 1] - spans[2 * j]);
                if (v != v)
                    unread++;
            }
            nums[k * count + r] = v;
        }
        for (k = 0; k < ntext; k++) {
            size_t j = texf[k];

            if (j < found) {
                memcpy(out + o, rec + spans[2 * j], spans[2 * j + 1] - spans[2 * j]);
                o += spans[2 * j + 1] - spans[2 * j];
            }
            out[o++] = join;
        }
    }
    *outlen = o;
    return unread;
}
