/* K native core: pure functions on byte strings (paths, glob patterns, brace words, awk records).
 *
 * Every function takes explicit lengths (bytes may contain any value), never does I/O, keeps no
 * state between calls and writes only into buffers the caller passes in, except kbrace_expand,
 * whose result is freed with kbrace_free. The Python twin in native/pytwin.py defines the same
 * behaviour and is the oracle of the differential tests. The cdef in native/build.py repeats
 * these prototypes for cffi: keep the two in step.
 */
#ifndef KNATIVE_H
#define KNATIVE_H

#include <stddef.h>
#include <stdint.h>

/* ---- kpath.c ---------------------------------------------------------------------------- */

/* Lexical normalisation to an absolute path (see native.normalize). `out` must hold at least
 * plen + clen + hlen + 3 bytes. Returns the length written. */
size_t kpath_normalize(const char *path, size_t plen, const char *cwd, size_t clen,
                       const char *home, size_t hlen, char *out);

/* Components of `path`, dropping empty ones and ".", keeping "..". Writes (offset, length)
 * pairs into `spans`, which must hold at least plen + 2 entries. Returns the pair count. */
size_t kpath_split(const char *path, size_t plen, size_t *spans);

/* 1 iff normalize(path) equals normalize(root) or lies below it. `scratch` must hold at
 * least plen + rlen + 10 bytes. */
int kpath_is_within(const char *path, size_t plen, const char *root, size_t rlen,
                    char *scratch);

/* ---- kglob.c ---------------------------------------------------------------------------- */

/* Whole-name shell pattern match with bash's bracket rules; `period` applies the leading-dot
 * rule. Returns 1 on a match, else 0. */
int kglob_match(const char *pat, size_t pn, const char *name, size_t nn, int period);

/* Match `count` names held in `names` (total bytes). With `lens` NULL the names are separated
 * by one NUL byte each; otherwise they are packed back to back with lengths lens[k].
 * hits[k] is set to 1 or 0. Returns the number of matches, or (size_t)-1 when lens is NULL
 * and the NULs do not split `names` into exactly `count` names (a name holds a NUL). */
size_t kglob_filter(const char *pat, size_t pn, const char *names, size_t total,
                    const size_t *lens, size_t count, int period, unsigned char *hits);

/* 1 iff the pattern holds an unescaped '*', '?' or '['. */
int kglob_has_magic(const char *pat, size_t pn);

/* ---- kbrace.c --------------------------------------------------------------------------- */

typedef struct {
    char *buf;     /* the words, each followed by one NUL */
    size_t *offs;  /* count + 1 offsets into buf: word k is buf[offs[k]:offs[k+1]-1] */
    size_t count;
} kbrace_words;

#define KBRACE_OK 0
#define KBRACE_TOO_MANY 1
#define KBRACE_TOO_DEEP 2
#define KBRACE_NOMEM 3

/* Largest nesting of brace groups accepted; deeper words give KBRACE_TOO_DEEP. */
#define KBRACE_MAX_NEST 200

/* bash brace expansion of one word. On KBRACE_OK *out holds the words (free them with
 * kbrace_free); the count is checked against max_words before any word is built. */
int kbrace_expand(const char *word, size_t n, size_t max_words, kbrace_words **out);
void kbrace_free(kbrace_words *w);

/* ---- kawk.c ----------------------------------------------------------------------------- */

/* The number awk reads at the start of s[0:n] (kshell's values.str_to_num: leading white
 * space, the longest decimal prefix, no hex) when it is m * 10^e with m <= 2^53 and
 * |e| <= 22, or 0 when no number starts it; NaN when it needs the caller's general
 * conversion (more digits, a wider exponent, "+inf"/"-nan"). */
double kawk_number(const char *s, size_t n);

/* Cut text[0:n], `count` records separated by the byte `rs`, into fields by the byte `fs`
 * (-1: awk's default, runs of ' ', '\t', '\n', ignored at both ends), each record at most
 * `cuts` times (cuts >= 1; every index below < cuts, those of texf distinct). For record r:
 *   nf[r] = min(its number of fields, cuts + 1), unless nf is NULL;
 *   nums[k * count + r] = kawk_number of field numf[k] (0-based), 0 when there is none;
 *   field texf[k]'s bytes ("" when none) are appended to out, each followed by fs (a space
 *   for -1), for k in order; *outlen is the total.
 * out must hold n + ntext * count bytes (a record's fields do not overlap), spans 2 * cuts
 * entries (scratch). Returns the count of NaNs written to nums, or -1 when the text does not
 * hold exactly `count` records (nothing then is meaningful). */
long kawk_columns(const char *text, size_t n, int rs, int fs, size_t count, size_t cuts,
                  const size_t *numf, size_t nnum, const size_t *texf, size_t ntext,
                  double *nums, uint32_t *nf, char *out, size_t *outlen, size_t *spans);

#endif
