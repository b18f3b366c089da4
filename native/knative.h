/* K native core: pure functions on byte strings (paths, glob patterns, brace words).
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

#endif
