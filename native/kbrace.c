/* bash brace expansion of one word, with bash's rules for what is and is not a brace
 * expression (quotes, backslashes, `${`, `$(`, whitespace around `{`, commas and `..` at the
 * outer level), sequences with bash's width and overflow rules, and the cartesian order of
 * several groups.
 *
 * The word is parsed once into a small tree (literal, sequence, alternatives, concatenation),
 * the number of resulting words is computed from the tree (saturating), and only then are the
 * words built: `{1..1000000000}` is refused in constant memory.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "knative.h"

#define NONE ((size_t)-1)
/* Byte at i of t[0..n), or 0 past the end (bash reads words as C strings). */
#define T(i) ((size_t)(i) < n ? t[(i)] : 0u)

typedef const unsigned char uc;

enum { N_LIT, N_SEQ, N_ALT, N_CAT };
enum { S_INT, S_ZINT, S_CHAR };

typedef struct {
    int kind;
    size_t first, last, next;  /* children (ALT, CAT) and the next sibling */
    size_t off, len;           /* LIT: a slice of the word */
    int64_t start, incr;       /* SEQ */
    uint64_t count;
    int type, width;
} node;

typedef struct {
    uc *w;
    node *nodes;
    size_t nn, cap;
    int err;
} ctx;

typedef struct {
    unsigned char *buf;
    size_t blen, bcap;
    size_t *offs; /* cnt + 1 entries */
    size_t cnt, ocap;
} wlist;

/* ---- scanning ------------------------------------------------------------------------- */

static int brace_ws(unsigned c)
{
    return c == 0 || c == ' ' || c == '\t' || c == '\n';
}

/* Index of the ')' closing a `$(`, `<(` or `>(` whose body starts at i, or n. This is a
 * lexical approximation of bash's command-substitution parser (quotes, backslashes, nesting). */
static size_t skip_subst(uc *t, size_t n, size_t i)
{
    int depth = 1;

    while (i < n) {
        unsigned c = t[i];

        if (c == '\\') {
            i += 2;
            continue;
        }
        if (c == '\'' || c == '"') {
            i++;
            while (i < n && t[i] != c) {
                if (c == '"' && t[i] == '\\')
                    i++;
                i++;
            }
            i++;
            continue;
        }
        if (c == '(')
            depth++;
        else if (c == ')' && --depth == 0)
            return i;
        i++;
    }
    return n;
}

/* From *ix, find the byte `satisfy` at brace level 0 outside quotes; for '}' it only counts
 * once a ',' or a `..` has been seen at level 0. Returns it (and its index in *ix), or 0 with
 * *ix = n when there is none. */
static unsigned gobble(uc *t, size_t n, size_t *ix, unsigned satisfy)
{
    size_t i = *ix;
    int level = 0, pass_next = 0, commas = satisfy == '}' ? 0 : 1;
    unsigned quoted = 0;

    while (i < n) {
        unsigned c = t[i];

        if (pass_next) {
            pass_next = 0;
            i++;
            continue;
        }
        if (c == '\\' && (quoted == 0 || quoted == '"' || quoted == '`')) {
            pass_next = 1;
            i++;
            continue;
        }
        if (c == '$' && T(i + 1) == '{' && quoted != '\'') { /* ${...} is not a brace */
            pass_next = 1;
            i++;
            if (quoted == 0)
                level++;
            continue;
        }
        if (quoted) {
            if (c == quoted)
                quoted = 0;
            if (quoted == '"' && c == '$' && T(i + 1) == '(')
                goto subst;
            i++;
            continue;
        }
        if (c == '"' || c == '\'' || c == '`') {
            quoted = c;
            i++;
            continue;
        }
        if ((c == '$' || c == '<' || c == '>') && T(i + 1) == '(') {
subst:
            i = skip_subst(t, n, i + 2) + 1;
            continue;
        }
        if (c == satisfy && level == 0 && commas > 0) {
            /* bash ignores a '{' with whitespace (or the word's edge) on both sides, and "{}" */
            if (c == '{' && (i == 0 || brace_ws(t[i - 1])) &&
                (brace_ws(T(i + 1)) || T(i + 1) == '}')) {
                i++;
                continue;
            }
            *ix = i;
            return c;
        }
        if (c == '{')
            level++;
        else if (c == '}' && level)
            level--;
        else if (satisfy == '}' && c == ',' && level == 0)
            commas++;
        else if (satisfy == '}' && c == '.' && T(i + 1) == '.' && T(i + 2) != satisfy &&
                 level == 0)
            commas++;
        i++;
    }
    *ix = n;
    return 0;
}

/* ---- sequences -------------------------------------------------------------------------- */

static int is_digit(unsigned c) { return c >= '0' && c <= '9'; }
static int is_alpha(unsigned c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static int is_cspace(unsigned c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* strtoimax on s[i..n): leading white space, a sign, digits. Returns the index after the
 * digits, or i itself when there are none; *erange is set on overflow. */
static size_t parse_int(uc *s, size_t n, size_t i, int64_t *val, int *erange)
{
    size_t st = i;
    uint64_t v = 0, limit;
    int neg = 0;

    *val = 0;
    *erange = 0;
    while (i < n && is_cspace(s[i]))
        i++;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    if (!(i < n && is_digit(s[i])))
        return st;
    limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n && is_digit(s[i]); i++) {
        unsigned d = s[i] - '0';

        if (v > (limit - d) / 10)
            *erange = 1;
        else
            v = v * 10 + d;
    }
    if (*erange)
        *val = neg ? INT64_MIN : INT64_MAX;
    else
        *val = neg ? (int64_t)(0 - v) : (int64_t)v;
    return i;
}

/* Fill a SEQ node from the inside of a brace group without a comma, as bash's
 * expand_seqterm and mkseq decide. Returns 0 when it is not a valid sequence. */
static int seqterm(uc *a, size_t len, node *nd)
{
    size_t k, ll, rn, ep, oep;
    uc *r;
    int lt, rt, er, width = 0;
    int64_t lv = 0, rv = 0, incr = 1;
    uint64_t prevn, aincr;

    for (k = 0; k + 1 < len; k++)
        if (a[k] == '.' && a[k + 1] == '.')
            break;
    if (k + 1 >= len)
        return 0;
    ll = k;
    r = a + k + 2;
    rn = len - k - 2;
    if (ll == 0 || rn == 0)
        return 0;

    /* left side: a legal number (blanks allowed around it) or one letter */
    lt = -1;
    ep = parse_int(a, ll, 0, &lv, &er);
    if (ep != 0 && !er) {
        while (ep < ll && (a[ep] == ' ' || a[ep] == '\t'))
            ep++;
        if (ep == ll)
            lt = S_INT;
    }
    if (lt < 0 && ll == 1 && is_alpha(a[0]))
        lt = S_CHAR;

    /* right side: a number or a letter, then an optional ..increment */
    rt = -1;
    if (is_digit(r[0]) || ((r[0] == '+' || r[0] == '-') && rn > 1 && is_digit(r[1]))) {
        ep = parse_int(r, rn, 0, &rv, &er);
        if (!er && (ep == rn || r[ep] == '.'))
            rt = S_INT;
    } else if (is_alpha(r[0]) && (rn == 1 || r[1] == '.')) {
        rt = S_CHAR;
        ep = 1;
    }
    if (rt < 0 || lt < 0 || lt != rt)
        return 0;
    oep = ep;
    er = 0;
    if (ep + 2 < rn && r[ep] == '.' && r[ep + 1] == '.')
        ep = parse_int(r, rn, ep + 2, &incr, &er);
    if (ep != rn || er)
        return 0;

    if (lt == S_CHAR) {
        lv = a[0];
        rv = r[0];
        width = 1;
    } else {
        size_t rl = oep;

        if (ll > 1 && a[0] == '0')
            width = (int)ll, lt = S_ZINT;
        if (ll > 2 && a[0] == '-' && a[1] == '0')
            width = (int)ll, lt = S_ZINT;
        if (rl > 1 && r[0] == '0' && (size_t)width < rl)
            width = (int)rl, lt = S_ZINT;
        if (rl > 2 && r[0] == '-' && r[1] == '0' && (size_t)width < rl)
            width = (int)rl, lt = S_ZINT;
        if (lt == S_ZINT && (size_t)width < ll)
            width = (int)ll;
        if (lt == S_ZINT && (size_t)width < rl)
            width = (int)rl;
    }

    /* mkseq: direction, overflow and size limits */
    if (incr == 0)
        incr = 1;
    if (lv > rv && incr > 0) {
        incr = -incr;
    } else if (lv < rv && incr < 0) {
        if (incr == INT64_MIN)
            return 0;
        incr = -incr;
    }
    if ((lv > 0 && rv < (INT64_MIN + 3) + lv) || (lv < 0 && rv > (INT64_MAX - 2) + lv))
        return 0;
    prevn = rv >= lv ? (uint64_t)rv - (uint64_t)lv : (uint64_t)lv - (uint64_t)rv;
    aincr = incr < 0 ? 0 - (uint64_t)incr : (uint64_t)incr;
    if (prevn / aincr > (uint64_t)INT_MAX - 3)
        return 0;

    nd->kind = N_SEQ;
    nd->start = lv;
    nd->incr = incr;
    nd->count = prevn / aincr + 1;
    nd->type = lt;
    nd->width = width;
    return 1;
}

/* Text of one sequence element into out (room for width + 24 bytes); returns its length. */
static size_t seq_item(const node *nd, uint64_t k, unsigned char *out)
{
    int64_t v = (int64_t)((uint64_t)nd->start + k * (uint64_t)nd->incr);
    char digits[24];
    size_t nd_ = 0, o = 0, sz, pad = 0;
    uint64_t mag;
    int neg;

    if (nd->type == S_CHAR) {
        out[0] = (unsigned char)v;
        return 1;
    }
    if (nd->type == S_ZINT)
        v = (int32_t)(uint32_t)(uint64_t)v; /* bash prints these through an int */
    neg = v < 0;
    mag = neg ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        digits[nd_++] = (char)('0' + mag % 10);
        mag /= 10;
    } while (mag);
    sz = nd_ + (size_t)neg;
    if (nd->type == S_ZINT && (size_t)nd->width > sz)
        pad = (size_t)nd->width - sz;
    if (neg)
        out[o++] = '-';
    memset(out + o, '0', pad);
    o += pad;
    while (nd_)
        out[o++] = (unsigned char)digits[--nd_];
    return o;
}

/* ---- parsing ---------------------------------------------------------------------------- */

static size_t new_node(ctx *x, int kind)
{
    node *nd;

    if (x->nn == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 16;
        node *nn = realloc(x->nodes, cap * sizeof *nn);

        if (nn == NULL) {
            x->err = KBRACE_NOMEM;
            return NONE;
        }
        x->nodes = nn;
        x->cap = cap;
    }
    nd = &x->nodes[x->nn];
    memset(nd, 0, sizeof *nd);
    nd->kind = kind;
    nd->first = nd->last = nd->next = NONE;
    return x->nn++;
}

static void add_child(ctx *x, size_t parent, size_t child)
{
    node *p = &x->nodes[parent];

    if (p->last == NONE)
        p->first = child;
    else
        x->nodes[p->last].next = child;
    p->last = child;
}

static int add_lit(ctx *x, size_t parent, size_t off, size_t len)
{
    size_t id;

    if (len == 0)
        return 0; /* an empty literal changes nothing in a concatenation */
    id = new_node(x, N_LIT);
    if (id == NONE)
        return -1;
    x->nodes[id].off = off;
    x->nodes[id].len = len;
    add_child(x, parent, id);
    return 0;
}

/* bash looks for a separating comma with backslashes as the only quoting. */
static int has_comma(uc *a, size_t len)
{
    size_t j;

    for (j = 0; j < len; j++) {
        if (a[j] == '\\')
            j++;
        else if (a[j] == ',')
            return 1;
    }
    return 0;
}

static size_t parse_amble(ctx *x, size_t off, size_t n, int depth);

/* The word w[off..off+n) as a concatenation: preamble, group, then the rest, left to right. */
static size_t parse_word(ctx *x, size_t off, size_t n, int depth)
{
    size_t cat = new_node(x, N_CAT);

    if (cat == NONE)
        return NONE;
    for (;;) {
        uc *t = x->w + off;
        size_t i = 0, start, close, tack;
        unsigned c;

        for (;;) { /* the first '{' that opens a complete group */
            size_t j;

            c = gobble(t, n, &i, '{');
            if (c == 0)
                break;
            j = i + 1;
            if (gobble(t, n, &j, '}') != 0)
                break;
            i++;
        }
        if (c == 0)
            return add_lit(x, cat, off, n) < 0 ? NONE : cat;
        start = close = i + 1;
        gobble(t, n, &close, '}');
        if (!has_comma(t + start, close - start)) {
            tack = new_node(x, N_SEQ);
            if (tack == NONE)
                return NONE;
            if (!seqterm(t + start, close - start, &x->nodes[tack])) {
                x->nodes[tack].kind = N_LIT; /* not a sequence: the group stays as it is */
                if (close + 1 == n)
                    return add_lit(x, cat, off, n) < 0 ? NONE : cat;
                x->nodes[tack].off = off + start - 1;
                x->nodes[tack].len = close - start + 2;
            }
        } else {
            tack = parse_amble(x, off + start, close - start, depth + 1);
            if (tack == NONE)
                return NONE;
        }
        if (add_lit(x, cat, off, i) < 0)
            return NONE;
        add_child(x, cat, tack);
        off += close + 1;
        n -= close + 1;
        if (n == 0)
            return cat;
    }
}

/* The inside of a group: alternatives split at the outer commas, each expanded in turn. */
static size_t parse_amble(ctx *x, size_t off, size_t n, int depth)
{
    size_t alt, i = 0, start = 0;
    unsigned c;

    if (depth > KBRACE_MAX_NEST) {
        x->err = KBRACE_TOO_DEEP;
        return NONE;
    }
    alt = new_node(x, N_ALT);
    if (alt == NONE)
        return NONE;
    do {
        size_t piece;

        c = gobble(x->w + off, n, &i, ',');
        piece = parse_word(x, off + start, i - start, depth);
        if (piece == NONE)
            return NONE;
        add_child(x, alt, piece);
        start = ++i;
    } while (c);
    return alt;
}

/* ---- counting and building -------------------------------------------------------------- */

static uint64_t count(const ctx *x, size_t id, uint64_t cap)
{
    const node *nd = &x->nodes[id];
    uint64_t total;
    size_t ch;

    switch (nd->kind) {
    case N_LIT:
        return 1;
    case N_SEQ:
        return nd->count < cap ? nd->count : cap;
    case N_ALT:
        total = 0;
        for (ch = nd->first; ch != NONE; ch = x->nodes[ch].next) {
            total += count(x, ch, cap);
            if (total >= cap)
                return cap;
        }
        return total;
    default:
        total = 1;
        for (ch = nd->first; ch != NONE; ch = x->nodes[ch].next) {
            uint64_t c = count(x, ch, cap);

            if (total > cap / c)
                return cap;
            total *= c;
            if (total >= cap)
                return cap;
        }
        return total;
    }
}

static int wl_init(wlist *l)
{
    memset(l, 0, sizeof *l);
    l->bcap = 64;
    l->ocap = 8;
    l->buf = malloc(l->bcap);
    l->offs = malloc(l->ocap * sizeof *l->offs);
    if (l->buf == NULL || l->offs == NULL)
        return -1;
    l->offs[0] = 0;
    return 0;
}

static void wl_free(wlist *l)
{
    free(l->buf);
    free(l->offs);
    l->buf = NULL;
    l->offs = NULL;
}

/* Append the word a + b, followed by a NUL (which lets Python split the words at once). */
static int wl_add(wlist *l, const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
    if (l->blen + an + bn + 1 > l->bcap) {
        size_t cap = l->bcap;
        unsigned char *nb;

        while (cap < l->blen + an + bn + 1)
            cap *= 2;
        nb = realloc(l->buf, cap);
        if (nb == NULL)
            return -1;
        l->buf = nb;
        l->bcap = cap;
    }
    if (l->cnt + 2 > l->ocap) {
        size_t *no = realloc(l->offs, 2 * l->ocap * sizeof *no);

        if (no == NULL)
            return -1;
        l->offs = no;
        l->ocap *= 2;
    }
    if (an)
        memcpy(l->buf + l->blen, a, an);
    if (bn)
        memcpy(l->buf + l->blen + an, b, bn);
    l->buf[l->blen + an + bn] = 0;
    l->blen += an + bn + 1;
    l->offs[++l->cnt] = l->blen;
    return 0;
}

#define WORD(l, k) ((l)->buf + (l)->offs[k]), ((l)->offs[(k) + 1] - (l)->offs[k] - 1)

/* Append the words of node id to out, in bash's order. */
static int gen(const ctx *x, size_t id, wlist *out)
{
    const node *nd = &x->nodes[id];
    size_t ch, k, j;

    switch (nd->kind) {
    case N_LIT:
        return wl_add(out, x->w + nd->off, nd->len, NULL, 0);
    case N_SEQ: {
        unsigned char *item = malloc((size_t)nd->width + 24);

        if (item == NULL)
            return -1;
        for (k = 0; k < nd->count; k++) {
            size_t len = seq_item(nd, k, item);

            if (wl_add(out, item, len, NULL, 0) < 0) {
                free(item);
                return -1;
            }
        }
        free(item);
        return 0;
    }
    case N_ALT:
        for (ch = nd->first; ch != NONE; ch = x->nodes[ch].next)
            if (gen(x, ch, out) < 0)
                return -1;
        return 0;
    default: {
        wlist acc, part, next;
        int rc = -1;

        if (wl_init(&acc) < 0 || wl_add(&acc, NULL, 0, NULL, 0) < 0) {
            wl_free(&acc);
            return -1;
        }
        for (ch = nd->first; ch != NONE; ch = x->nodes[ch].next) {
            memset(&next, 0, sizeof next);
            if (wl_init(&part) < 0 || gen(x, ch, &part) < 0 || wl_init(&next) < 0)
                goto fail;
            for (k = 0; k < acc.cnt; k++)
                for (j = 0; j < part.cnt; j++)
                    if (wl_add(&next, WORD(&acc, k), WORD(&part, j)) < 0)
                        goto fail;
            wl_free(&part);
            wl_free(&acc);
            acc = next;
        }
        for (k = 0; k < acc.cnt; k++)
            if (wl_add(out, WORD(&acc, k), NULL, 0) < 0)
                goto done;
        rc = 0;
        goto done;
fail:
        wl_free(&part);
        wl_free(&next);
done:
        wl_free(&acc);
        return rc;
    }
    }
}

int kbrace_expand(const char *word, size_t n, size_t max_words, kbrace_words **out)
{
    ctx x;
    size_t root;
    uint64_t cap = max_words < UINT64_MAX ? (uint64_t)max_words + 1 : UINT64_MAX;
    wlist words;
    kbrace_words *res;

    *out = NULL;
    memset(&x, 0, sizeof x);
    memset(&words, 0, sizeof words);
    x.w = (uc *)word;
    root = parse_word(&x, 0, n, 0);
    if (root == NONE) {
        free(x.nodes);
        return x.err ? x.err : KBRACE_NOMEM;
    }
    if (count(&x, root, cap) > max_words) {
        free(x.nodes);
        return KBRACE_TOO_MANY;
    }
    res = malloc(sizeof *res);
    if (res == NULL || wl_init(&words) < 0 || gen(&x, root, &words) < 0) {
        free(res);
        wl_free(&words);
        free(x.nodes);
        return KBRACE_NOMEM;
    }
    free(x.nodes);
    res->buf = (char *)words.buf;
    res->offs = words.offs;
    res->count = words.cnt;
    *out = res;
    return KBRACE_OK;
}

void kbrace_free(kbrace_words *w)
{
    if (w == NULL)
        return;
    free(w->buf);
    free(w->offs);
    free(w);
}
