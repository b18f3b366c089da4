# echo (-n, -e, -E) and printf (formats, widths, flags, reuse of the format, escapes, errors).

#### echo joins arguments with spaces
echo a b   c

#### echo with no arguments prints a newline
echo
echo end

#### echo -n suppresses the newline
echo -n abc
echo def

#### echo -e interprets escapes
echo -e 'a\tb\nc'

#### echo without -e keeps backslashes
echo 'a\tb'

#### echo -E turns escapes off
echo -E 'a\nb'

#### echo -e with \c stops output
echo -e 'before\cafter'
echo next

#### echo -e octal and hex escapes
echo -e '\0101\x42'

#### echo combined flags
echo -ne 'x\ty'
echo

#### echo with an unknown flag prints it
echo -z text
echo -- text

#### echo -n as a separate later argument is text
echo a -n

#### echo of a dash alone
echo -

#### printf with a simple format
printf 'hello %s\n' world

#### printf reuses the format for remaining arguments
printf '%s\n' one two three

#### printf with several conversions reused
printf '%s=%s\n' a 1 b 2 c

#### printf without a trailing newline
printf 'no newline'
echo

#### printf %d and %i
printf '%d %i\n' 42 -7

#### printf integer from a character constant
printf '%d\n' "'A"

#### printf %d with a non-number
printf '%d\n' abc
echo "status $?"

#### printf %d with trailing garbage
printf '%d\n' 12abc
echo "status $?"

#### printf width and left alignment
printf '[%5s][%-5s]\n' ab cd

#### printf zero padding
printf '[%05d][%-5d][%+d]\n' 42 42 42

#### printf precision for strings
printf '[%.2s][%5.1s]\n' abcdef xyz

#### printf hexadecimal and octal
printf '%x %X %o %#x %#o\n' 255 255 8 255 8

#### printf unsigned and character
printf '%u %c\n' 17 word

#### printf floating point
printf '%.2f %e %g\n' 3.14159 1234.5 0.0001

#### printf percent sign
printf '100%%\n'

#### printf %b interprets escapes in the argument
printf '%b\n' 'a\tb' 'c\nd'

#### printf %q quotes for the shell
printf '%q\n' 'a b' "it's" 'plain'

#### printf escapes in the format
printf 'tab\there\nnew\\line\n'

#### printf octal escape in the format
printf '\101\102\n'

#### printf with missing arguments uses empty and zero
printf '[%s][%d]\n'

#### printf with more conversions than arguments
printf '%s-%s\n' only

#### printf star width
printf '[%*s]\n' 6 hi

#### printf -v assigns to a variable
printf -v out '%s:%d' key 5
echo "$out"

#### printf with no arguments is an error
printf
echo "status $?"

#### printf with an invalid conversion
printf '%y\n' x
echo "status $?"

#### printf with a dash-leading format needs --
printf -- '-%s-\n' x

#### printf large integer
printf '%d\n' 9223372036854775807

#### printf negative zero padded
printf '%06d\n' -42

#### printf string with embedded percent in argument
printf '%s\n' '50%'

#### printf hex input to %d
printf '%d %d\n' 0x10 010

#### printf %s with an empty argument
printf '[%s]\n' ''

#### printf with a format from a variable
fmt='%s|%s\n'
printf "$fmt" a b

#### echo output of many arguments from a glob
echo *.txt
## seed: x.txt y.txt

#### printf %c with an empty string
printf '[%c]\n' ''

#### printf %5b and width for b
printf '[%5b]\n' 'a\n' | while IFS= read -r l; do echo "<$l>"; done

#### printf format reuse stops when arguments run out mid-format
printf '%s %s %s\n' 1 2 3 4

#### echo -e with a backslash at the end
echo -e 'end\\'

#### printf with \c in %b stops output
printf '%b' 'stop\chere'
echo

#### printf %i with a leading plus and spaces
printf '%i\n' ' +5'

#### printf %s with a number
printf '%s\n' 007

#### printf %f with an integer
printf '%f\n' 3

#### printf column table
printf '%-6s|%4s\n' name qty apple 3 kiwi 12

#### printf float width and precision
printf '%8.2f|%-10.3e|\n' 3.14159 1234.5

#### printf negative number in hex
printf '%x\n' -1

#### printf precision on an integer
printf '%.3d|%03d:%02d\n' 7 5 7

#### printf %d of an empty string and of spaces
printf '%d|%d\n' '' ' 12'

#### printf %c takes the first character of each argument
printf '%c%c\n' abc def

#### printf %b with hex and octal escapes
printf '%b\n' '\x41\0102'

#### printf %q backslashes ^ and , always, # only first, ~ first or after = and :
printf '%q\n' 'a^b,c' '^x' 'a{,2}' '~a' 'a~' '#a' 'a#' 'a=~b' 'a:~b' '%@+-./:=_' "a'b"

#### printf %q writes bytes outside the locale's characters in octal
printf '%q\n' 'é,ü' "$(printf 'a\001\377')"
LC_ALL=C.UTF-8; printf '%q\n' 'é,ü' "$(printf 'a\377b')" "$(printf 'é\377')"
