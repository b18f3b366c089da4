# read's backslash handling with -n/-N/-d (escapes do not count, a backslash-newline is joined
# under any delimiter, -N does not split), characters vs bytes by locale, bash's field-splitting
# quirks; printf's number parsing (trailing text, ranges, 'c codes by locale), %(fmt)T with an
# exported TZ only and its 128-byte limit, byte-counted widths; echo -e / printf %b escapes.

#### read -n does not count a backslash, and drops it
printf '%s\n' 'a\b\c\d\e\f' | { read -n 5; echo "[$REPLY]"; }
printf '%s\n' 'a\ \ \ \ \ ' | { read -n 5; echo "[$REPLY]"; }

#### read -n with a backslash at the count
printf '%s\n' 'abc\def\ghijklmn' | { read -n 4; echo "[$REPLY]"; }
printf '%s\n' '   \xxx\xxxxxxxx' | { read -n 4; echo "[$REPLY]"; }

#### read -n joins a backslash-newline without counting it
printf 'abc\\\ndefg\n' | { read -n 4; echo "[$REPLY]"; }

#### read -n -r counts the backslash
printf '%s\n' 'a\b\c\d' | { read -r -n 4; echo "[$REPLY]"; }

#### read -N counts escapes as bash does and keeps the rest for the next read
printf 'a\\bcdefgh\n' | { read -N 4 x; read rest; echo "[$x] [$rest]"; }

#### read -N does not split fields, -n does
echo 'a b c' > f
read -n 5 A B C < f; echo "'$A' '$B' '$C'"
read -n 4 A B C < f; echo "'$A' '$B' '$C'"
read -N 5 A B C < f; echo "'$A' '$B' '$C'"
read -N 4 A B C < f; echo "'$A' '$B' '$C'"

#### read -N reads past newlines and ignores -d
printf 'ab\ncd,ef' | { read -N 6 -d , x; echo "[$x] $?"; }

#### read -N at end of input returns 1
printf 'abc' | { read -N 10 x; echo "$? [$x]"; }

#### read -n stops at the delimiter and returns 0
printf 'ab\ncd' | { read -n 10 x; echo "$? [$x]"; read -n 10 y; echo "$? [$y]"; }

#### read -n 0 reads nothing
printf 'abc\n' | { read -n 0 x; echo "$? [$x]"; read y; echo "[$y]"; }

#### read -n counts characters in a UTF-8 locale
LC_ALL=C.UTF-8
printf 'éàü€x\n' | { read -n 3 x; echo "[$x]"; read y; echo "[$y]"; }

#### read -n counts bytes in the C locale
LC_ALL=C
printf 'éàü\n' | { read -n 3 x; echo "${#x}"; read y; echo "${#y}"; }

#### read -N with multibyte characters in UTF-8
LC_ALL=C.UTF-8
printf 'a€b€c' | { read -N 4 x; echo "[$x] ${#x}"; }

#### read -n in UTF-8 takes an invalid byte and what follows it as one character
LC_ALL=C.UTF-8
printf '\303ab\n' | { read -r -n 2 x; read y; echo "${#x} [$y]"; }

#### read -d joins a backslash-newline too
printf '%s\n' 'a b\' 'c d' | { read -d ,; echo "[$REPLY]"; }
printf '%s\n' 'a b\,c d' | { read -d ,; echo "[$REPLY]"; }

#### read -d escapes the delimiter with a backslash
printf 'x\\,y,z' | { read -d , a; read -d , b; echo "[$a] [$b]"; }

#### read -d '' reads to a NUL byte
printf 'one\ntwo\0three\0' | { read -r -d '' a; read -r -d '' b; echo "[$a] [$b]"; }

#### read drops NUL bytes from a line
printf 'a\0b\0c\n' | { read -r x; echo "[$x] ${#x}"; }

#### read with a trailing backslash at end of input
printf 'abc\\' | { read x; echo "$? [$x]"; }

#### read keeps escaped IFS characters in a field
printf '%s\n' 'a\ b c\:d:e' | { IFS=' :' read x y z; echo "[$x] [$y] [$z]"; }

#### read bash bug: escaped blanks at the end of the last field
IFS='x '
printf '%s\n' 'x\  \ ' | { read a b; printf '%q %q\n' "$a" "$b"; }
printf '%s\n' 'a b c\ ' | { read a b; printf '%q %q\n' "$a" "$b"; }

#### read last variable: one field left loses its trailing separator, more keep theirs
printf '%s\n' 'a b,' 'a b,,' 'a b, c,' | while IFS=', ' read x y; do echo "[$x] [$y]"; done

#### read -a with escapes and non-whitespace separators
printf '%s\n' 'a:\:b::c\ d:' | { IFS=: read -a arr; echo "${#arr[@]}"; printf '<%s>' "${arr[@]}"; echo; }

#### read into array elements
declare -A m; a=(x)
read 'a[2]' 'm[k 1]' <<< 'one two'
echo "${a[2]} ${m[k 1]}"

#### read assigns the names before an invalid one
read y 'b c' z <<< 'q r s'; echo "$? [$y]"

#### read of a readonly variable
readonly ro
read ro <<< value; echo "$?"
read ok ro <<< 'a b'; echo "$? [$ok]"

#### read option errors
read -n x v <<< a; echo $?
read -n -1 v <<< a; echo $?
read -t -1 v <<< a; echo $?
read -t 1x v <<< a; echo $?
read -u 9 v; echo $?
read -i text -e v <<< abc; echo "$? $v"

#### read -t 0 polls
read -t 0 < /dev/null; echo $?
read -t 0.0 <<< x; echo $?
{ sleep 0.5; echo late; } | { read -t 0; echo "$?"; read -t 0.000000; echo "$?"; }
## tools: sleep

#### read -n leaves the rest of a pipe and of a file to the next reader
printf 'abcdef\nxyz' | { read -n 2 a; read -N 1 b; cat; echo " [$a$b]"; }
printf 'abcdef\nxyz' > f
{ read -n 2 a; read -d e b; cat; echo " [$a $b]"; } < f
## tools: cat

#### printf %d with trailing text is an error but prints the number
printf '[%d]' '3 ' ' -42 ' ' -42z' 12abc; echo " rc=$?"

#### printf %d and %x with leading blanks and signs
printf '[%d][%d][%X][%x]' ' -123' ' +077' ' +0xff' '	7'; echo " rc=$?"

#### printf invalid octal and hex numbers
printf '[%d]' 08 0x1g 0x ' 08' 1e3; echo " rc=$?"

#### printf numbers that are not numbers
printf '[%d]' + - ' ' "' a" '"'; echo " rc=$?"

#### printf %u %x %o wrap negative numbers and clamp overflow
for v in -1 -18446744073709551615 -18446744073709551616 18446744073709551616; do
  printf '%u %x %o|' "$v" "$v" "$v"; echo " rc=$?"
done

#### printf %d clamps out-of-range values with a warning
printf '%d %i\n' -18446744073709551616 9223372036854775808; echo "rc=$?"

#### printf out of range with trailing text is an invalid number
printf '%d\n' 99999999999999999999x; echo "rc=$?"

#### printf the code of a character in UTF-8
LC_ALL=C.UTF-8
printf '%d %x %o %d %d\n' "'é" "'€" '"a' "'" "'$(printf '\316\316')"

#### printf the code of a character in the C locale is its first byte
LC_ALL=C
printf '%d %x %d\n' "'é" "'€" "'$(printf '\316')"

#### printf 'c of invalid UTF-8 bytes is the byte
LC_ALL=C.UTF-8
for b in '\316\316' '\274' '\301\201' '\340\201\201' '\364\221\204\221'; do
  printf '%x ' "'$(printf "$b")"
done; echo

#### printf floating point parsing
printf '[%.2f]' 1.5 ' 2' 0x10 1e2 -inf "'A" 3x ''; echo " rc=$?"

#### printf %(fmt)T uses TZ only when it is exported
unset TZ
TZ=Asia/Tokyo; printf '%(%H %Z)T\n' 0
TZ=Asia/Tokyo printf '%(%H %Z)T\n' 0
f() { local -x TZ=America/New_York; printf '%(%H %Z)T\n' 0; }; f
export TZ; printf '%(%H %Z)T\n' 0
export -n TZ; printf '%(%H %Z)T\n' 0

#### printf %(fmt)T prints nothing for a result of 128 bytes or more
export TZ=UTC
f31=$(printf '%%Y%.0s' $(seq 31)); f32=$(printf '%%Y%.0s' $(seq 32))
printf "%($f31)T" 0 | wc -c
printf "%($f32)T|" 0; echo
## tools: seq wc

#### printf %(fmt)T with an empty or missing argument, nested parens, width and precision
export TZ=UTC
printf '[%(%Y)T]' ''; printf '[%(%H(x))T]' 3600; printf '[%10.3(%A)T][%-6(%d)T]\n' 0 0
printf '[%(%Y)T]\n' 99999999999999999

#### printf %(fmt)T without a T is a warning
printf '[%(%H)X]\n' 0; echo "rc=$?"

#### printf widths and precisions count bytes
LC_ALL=C.UTF-8
printf '[%3s][%-3s][%.1s][%5b][%.2q]\n' é é éa 'é' 'a b' | od -An -c
## tools: od

#### printf -v errors
printf -v 'x y' '%s' a; echo "rc=$?"
readonly r; printf -v r '%s' a; echo "rc=$?"
printf -v; echo "rc=$?"
printf -v 'arr[1]' '%s' ok; echo "${arr[1]}"

#### printf %n stores the byte count
printf 'ab%nc%n\n' one two; echo "$one $two"

#### echo -e octal needs a leading zero, up to three digits after it
echo -e 'a\0101b|\101|\0|\1|\8|\03777|\0400' | od -An -c
## tools: od

#### printf %b octal with and without the leading zero
printf '%b|' '\101' '\0101' '\558' '\0558' '\7' '\07' '\0007' '\1234' | od -An -c
## tools: od

#### printf format octal takes three digits at most
printf '\101\0101\1234|\08\n' | od -An -c
## tools: od

#### echo -e and printf %b hex with one and two digits
echo -e '\x41\x4\x4g\xffz' | od -An -tx1
printf '%b' '\x41\x4\x4g' | od -An -c
## tools: od

#### echo -e and printf %b unicode escapes in UTF-8
LC_ALL=C.UTF-8
echo -e '\u00e9\u20ac\U0001F600\u6\U41'
printf '%b\n' '\u00e9\u20ac\U0001F600\u6\U41'
printf '\u00e9 \U0001F600\n'

#### echo -e and printf unicode escapes in the C locale
LC_ALL=C
echo -e '\u00e9|\u41'
printf '%b|\u00e9\n' '\u00e9'

#### echo -e and printf %b with a lone \x or \u
echo -e 'a\x' '\u' 'b\U'
printf '%b|' '\x' 'a\u' '\Ug'; echo "rc=$?"
printf 'c\xd\n'; printf '\x\n'; echo "rc=$?"

#### a trailing backslash in echo -e, printf %b and the format
echo -e 'abc\'
printf '%b|\n' 'abc\'
printf 'abc\'; echo
printf 'abc\\\n'

#### \c stops output in echo -e and printf %b
echo -e 'one\ctwo'; echo
printf '%s %b %s\n' a 'b\cc' d; echo "rc=$?"
printf 'x\cy\n'; echo "|rc=$?"

#### printf format escapes for quotes and question marks
printf '\"\'"'"'\?\q|\n'
printf '%b|\n' '\"\'"'"'\?\q'
echo -e '\"\?\q'

#### printf %% takes no flags or width
printf 'a%5%|b\n'; echo " rc=$?"
printf '%%|%d%%\n' 5

#### printf format escapes: an unknown one keeps its backslash and what follows is read on
printf '\%d|\q%s|\c|\8\n' 5 6
