"""cffi build of the native core (API mode, out of line) into `native._knative`.

Used two ways: setuptools runs it through `cffi_modules=["native/build.py:ffibuilder"]` (so
`pip install -e .` and normal installs compile it), and `python native/build.py` builds the
extension in place, next to native/__init__.py, for development.
"""

from __future__ import annotations

import os
import sys

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The prototypes of knative.h, as cffi reads them (keep the two in step).
CDEF = """
size_t kpath_normalize(const char *path, size_t plen, const char *cwd, size_t clen,
                       const char *home, size_t hlen, char *out);
size_t kpath_split(const char *path, size_t plen, size_t *spans);
int kpath_is_within(const char *path, size_t plen, const char *root, size_t rlen,
                    char *scratch);

int kglob_match(const char *pat, size_t pn, const char *name, size_t nn, int period);
size_t kglob_filter(const char *pat, size_t pn, const char *names, size_t total,
                    const size_t *lens, size_t count, int period, unsigned char *hits);
int kglob_has_magic(const char *pat, size_t pn);

typedef struct {
    char *buf;
    size_t *offs;
    size_t count;
} kbrace_words;

#define KBRACE_OK 0
#define KBRACE_TOO_MANY 1
#define KBRACE_TOO_DEEP 2
#define KBRACE_NOMEM 3
#define KBRACE_MAX_NEST 200

int kbrace_expand(const char *word, size_t n, size_t max_words, kbrace_words **out);
void kbrace_free(kbrace_words *w);

double kawk_number(const char *s, size_t n);
long kawk_columns(const char *text, size_t n, int rs, int fs, size_t count, size_t cuts,
                  const size_t *numf, size_t nnum, const size_t *texf, size_t ntext,
                  double *nums, uint32_t *nf, char *out, size_t *outlen, size_t *spans);
"""

SOURCES = ["kpath.c", "kglob.c", "kbrace.c", "kawk.c"]


FLAGS = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Wno-unused-parameter"]


def _set_source(ffi: FFI, native_dir: str) -> None:
    """Declare the module; native_dir is native/ relative to the cwd (setuptools wants that)."""
    ffi.set_source(
        "native._knative",
        '#include "knative.h"',
        sources=[os.path.join(native_dir, name) for name in SOURCES],
        include_dirs=[native_dir],
        extra_compile_args=FLAGS,
    )


ffibuilder = FFI()
ffibuilder.cdef(CDEF)
if __name__ != "__main__":  # run by setuptools from the project root
    _set_source(ffibuilder, os.path.relpath(HERE, os.getcwd()))


def main() -> int:
    """Build native/_knative*.so in place (the generated C and objects stay under native/)."""
    os.chdir(ROOT)
    _set_source(ffibuilder, "native")
    so = ffibuilder.compile(tmpdir=".", verbose="-q" not in sys.argv)
    print(os.path.relpath(so, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
