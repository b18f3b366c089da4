/* Lexical path operations: normalise, split, traversal guard. No filesystem access. */
#include <string.h>

#include "knative.h"

/* Apply the components of s[0..n) to the absolute path held in out[0..*len).
 * The held path is "" for the root, else "/a/b" (no trailing slash, no "." or ".."). */
static void walk(char *out, size_t *len, const char *s, size_t n)
{
    size_t i = 0, o = *len;

    while (i < n) {
        size_t st, cl;

        while (i < n && s[i] == '/')
            i++;
        st = i;
        while (i < n && s[i] != '/')
            i++;
        cl = i - st;
        if (cl == 0 || (cl == 1 && s[st] == '.'))
            continue;
        if (cl == 2 && s[st] == '.' && s[st + 1] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
            continue;
        }
        out[o++] = '/';
        memcpy(out + o, s + st, cl);
        o += cl;
    }
    *len = o;
}

size_t kpath_normalize(const char *path, size_t plen, const char *cwd, size_t clen,
                       const char *home, size_t hlen, char *out)
{
    size_t o = 0;

    if (plen > 0 && path[0] == '/') {
        walk(out, &o, path, plen);
    } else if (plen > 0 && path[0] == '~' && (plen == 1 || path[1] == '/')) {
        walk(out, &o, home, hlen);
        walk(out, &o, path + 1, plen - 1);
    } else {
        walk(out, &o, cwd, clen);
        walk(out, &o, path, plen);
    }
    if (o == 0)
        out[o++] = '/';
    return o;
}

size_t kpath_split(const char *path, size_t plen, size_t *spans)
{
    size_t i = 0, k = 0;

    while (i < plen) {
        size_t st, cl;

        while (i < plen && path[i] == '/')
            i++;
        st = i;
        while (i < plen && path[i] != '/')
            i++;
        cl = i - st;
        if (cl == 0 || (cl == 1 && path[st] == '.'))
            continue;
        spans[2 * k] = st;
        spans[2 * k + 1] = cl;
        k++;
    }
    return k;
}

int kpath_is_within(const char *path, size_t plen, const char *root, size_t rlen,
                    char *scratch)
{
    char *a = scratch, *b = scratch + plen + 5;
    size_t al = kpath_normalize(path, plen, "/", 1, "/", 1, a);
    size_t bl = kpath_normalize(root, rlen, "/", 1, "/", 1, b);

    if (bl == 1)
        return 1; /* the root "/" holds everything */
    if (al < bl || memcmp(a, b, bl) != 0)
        return 0;
    return al == bl || a[bl] == '/';
}
