"""gawk 5.2's usage text (printed, as awk, on a bad option or a missing program)."""

USAGE = (
    'Usage: awk [POSIX or GNU style options] -f progfile [--] file ...\n'
    "Usage: awk [POSIX or GNU style options] [--] 'program' file ...\n"
    'POSIX options:\t\tGNU long options: (standard)\n'
    '\t-f progfile\t\t--file=progfile\n'
    '\t-F fs\t\t\t--field-separator=fs\n'
    '\t-v var=val\t\t--assign=var=val\n'
    'Short options:\t\tGNU long options: (extensions)\n'
    '\t-b\t\t\t--characters-as-bytes\n'
    '\t-c\t\t\t--traditional\n'
    '\t-C\t\t\t--copyright\n'
    '\t-d[file]\t\t--dump-variables[=file]\n'
    '\t-D[file]\t\t--debug[=file]\n'
    "\t-e 'program-text'\t--source='program-text'\n"
    '\t-E file\t\t\t--exec=file\n'
    '\t-g\t\t\t--gen-pot\n'
    '\t-h\t\t\t--help\n'
    '\t-i includefile\t\t--include=includefile\n'
    '\t-I\t\t\t--trace\n'
    '\t-l library\t\t--load=library\n'
    '\t-L[fatal|invalid|no-ext]\t--lint[=fatal|invalid|no-ext]\n'
    '\t-M\t\t\t--bignum\n'
    '\t-N\t\t\t--use-lc-numeric\n'
    '\t-n\t\t\t--non-decimal-data\n'
    '\t-o[file]\t\t--pretty-print[=file]\n'
    '\t-O\t\t\t--optimize\n'
    '\t-p[file]\t\t--profile[=file]\n'
    '\t-P\t\t\t--posix\n'
    '\t-r\t\t\t--re-interval\n'
    '\t-s\t\t\t--no-optimize\n'
    '\t-S\t\t\t--sandbox\n'
    '\t-t\t\t\t--lint-old\n'
    '\t-V\t\t\t--version\n'
    '\n'
    "To report bugs, use the `gawkbug' program.\n"
    "For full instructions, see the node `Bugs' in `gawk.info'\n"
    "which is section `Reporting Problems and Bugs' in the\n"
    'printed version.  This same information may be found at\n'
    'https://www.gnu.org/software/gawk/manual/html_node/Bugs.html.\n'
    'PLEASE do NOT try to report bugs by posting in comp.lang.awk,\n'
    'or by using a web forum such as Stack Overflow.\n'
    '\n'
    'gawk is a pattern scanning and processing language.\n'
    'By default it reads standard input and writes standard output.\n'
    '\n'
    'Examples:\n'
    "\tawk '{ sum += $1 }; END { print sum }' file\n"
    "\tawk -F: '{ print $1 }' /etc/passwd\n"
)
