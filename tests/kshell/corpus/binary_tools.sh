# od (GNU coreutils 9.1), xxd (vim 9.0's) and hexdump/hd (util-linux 2.38) on binary data, and
# mkfifo with the FIFO rendezvous: bash runs the host's programs (/usr/bin), K its own.

#### od default: octal shorts and the end offset
od notes.txt
## tools: od
## file: notes.txt
hello world
## end

#### od -c with escapes and bytes from 0x80
printf '\000\a\b\t\n\v\f\r\033\177\200\377 A~' | od -c
## tools: od

#### od -t a names characters, ignoring the high bit
printf '\000\a\b\t\n\v\f\r\033\177\200\377 A~\340' | od -t a
## tools: od

#### od -An -t x1 with a short last line
printf 'abcdefghijklmnopqrst' | od -An -t x1
## tools: od

#### od -A d -t u1 and -A x -t d1
printf '\001\177\200\377abc' > f
od -A d -t u1 f
od -A x -t d1 f
## tools: od

#### od -t x2 x4 x8 pad the last value with zeros
printf 'abcdefghijk' > f
od -t x2 f
od -t x4 f
od -t x8 f
## tools: od

#### od octal units of 1 2 and 4 bytes
printf '\001\002\003\004\005\006\007\010\377\376' > f
od -t o1 f
od -t o2 f
od -t o4 f
## tools: od

#### od signed and unsigned decimals of every size
printf '\377\376\375\374\373\372\371\370\001\000\000\000\000\000\000\200' > f
od -t d2 -t u2 f
od -t d4 -t u4 f
od -t d8 -t u8 f
od -t dC -t uS -t dI -t uL f
## tools: od

#### od -t f4 and f8 print the shortest exact value
printf '\000\000\200\077\000\000\040\300\315\314\314\075\000\000\200\177\000\000\300\377\001\000\000\000\000\000\000\000\000\000\000\200' > f
od -t f4 f
od -t f8 f
od -t fF -t fD f
## tools: od

#### od -t f8 on doubles from text bytes
od -t f8 -t c notes.txt
## tools: od
## file: notes.txt
The quick brown fox jumps over the lazy dog
## end

#### od -t fL long doubles
printf '\000\000\000\000\000\000\000\200\377\077\000\000\000\000\000\000\000\240\000\000\000\000\000\300\000\100\000\000\000\000\000\000' > f
od -t fL f
od -t f16 notes.txt
## tools: od
## file: notes.txt
hello world, long doubles
## end

#### od several -t types share the columns
printf 'hello, world!\n' | od -t d2 -t x1z -t c
## tools: od

#### od -t x1z prints the characters after each line
od -A x -t x1z notes.txt
## tools: od
## file: notes.txt
line one
second line, longer
## end

#### od traditional options
printf 'ABCDEFGHIJ\200\377' > f
od -b f
od -c f
od -d f
od -o f
od -x f
od -s f
od -i f
od -l f
## tools: od

#### od collapses repeated lines into a star
printf '%064d' 0 | od -c
printf '%040dxy' 0 | od -t x1
## tools: od

#### od -v shows every line
printf '%048d' 0 | od -v -t x2
## tools: od

#### od -j and -N skip and limit with suffixes
printf '0123456789abcdefghijklmnopqrstuvwxyz' > f
od -j 3 -N 5 -c f
od -j 0x10 -N 010 -t x1 f
od --skip-bytes=30 -c f
od -N 1K -t x1 f
## tools: od

#### od -j past the end of the input
printf 'abc' | od -j 4
## status: 1
## tools: od

#### od -w sets the bytes per line
printf 'abcdefghijklmnopqrstuvwxyz0123456789' > f
od -w4 -t x1 f
od -w -t x1 f
od --width=8 -c f
## tools: od

#### od -w not a multiple of the type size warns
printf 'abcdefgh' | od -w3 -t x2
## tools: od

#### od --endian=big and little
printf '\001\002\003\004\005\006\007\010' > f
od --endian=big -t x2 -t x4 f
od --endian=little -t x8 f
od --endian=big -t f4 f
## tools: od

#### od reads several files and standard input as one stream
printf 'abc' > a
printf 'xyz' > b
echo 123 | od -c a - b
## tools: od

#### od with a missing file among others
printf 'abc' > a
od -c a nofile a
echo "status $?"
od nofile
echo "status $?"
## tools: od

#### od on empty input
printf '' | od
printf '' | od -An -t x1
echo done
## tools: od

#### od bad type strings
od -t q f
echo "status $?"
od -t x3 f
echo "status $?"
od -t f2 f
echo "status $?"
od -t d16 f
echo "status $?"
## tools: od

#### od bad options and numbers
od -A q f
echo "status $?"
od -j abc f
echo "status $?"
od -N 1x f
echo "status $?"
od --endian=middle f
echo "status $?"
od -z f
echo "status $?"
## tools: od

#### od traditional offset operands
printf '0123456789abcdef' > f
od -c f +3
od -c f 10
od -c +12 < f
## tools: od

#### od --traditional with a label
printf '0123456789' > f
od --traditional -c f 2 100
## tools: od

#### od -S finds NUL-terminated strings
printf 'ab\000hello\000x\377world!\000tail' | od -S 4
printf 'ab\000hello\000' | od -A d -S 3
## tools: od

#### od -N leaves the rest of standard input
{ od -N 4 -c; cat; }
## tools: od cat
## stdin:
abcdefgh
## end

#### od on a directory
mkdir d
od d
echo "status $?"
## tools: od mkdir

#### xxd default dump
xxd notes.txt
## tools: xxd
## file: notes.txt
Hello, xxd!
This line is longer than sixteen bytes.
## end

#### xxd shows bytes from 0x80 as dots
printf '\000\001\037 ~\177\200\377abc' | xxd
## tools: xxd

#### xxd -p plain hex and its columns
printf '0123456789abcdef0123456789abcdefXYZ' > f
xxd -p f
xxd -p -c 8 f
xxd -ps -c 0 f
xxd -plain -c5 f
## tools: xxd

#### xxd -r -p turns hex back into bytes
echo '48 65 6c6c 6f0a' | xxd -r -p
printf '%s\n' 5859 5a | xxd -r -p | od -c
## tools: xxd od

#### xxd -r round trip of binary data
printf '\000\001\002\377\376hello\n\200world%020d' 7 > f
xxd f | xxd -r > g
od -c g
xxd -p f | xxd -r -p | od -An -t x1
## tools: xxd od

#### xxd -r writes into an outfile without truncating it
printf 'abcdefgh' > g
echo '00000002: 5859' | xxd -r - g
od -c g
echo '0000000a: 5a' | xxd -r - g
od -c g
## tools: xxd od

#### xxd -r fills a gap with zeros and cannot go back on a pipe
printf '00000004: 41\n00000000: 42\n' | xxd -r | od -c
echo "status ${PIPESTATUS[1]}"
## tools: xxd od

#### xxd -r -s adds an offset
echo '00000000: 4142' | xxd -r -s 3 | od -c
## tools: xxd od

#### xxd -l and -s on a file
printf '0123456789abcdefghijklmnopqrstuvwxyz' > f
xxd -l 5 f
xxd -s 30 f
xxd -s -4 f
xxd -s 0x20 -l 2 f
xxd -s 100 f
echo "status $?"
## tools: xxd

#### xxd -s on standard input reads forward
printf '0123456789' | xxd -s 4
printf '0123456789' | xxd -s +2 -l 3
xxd -s -3 < f
printf '0123' > f
printf '0123456789' | xxd -s 20
echo "status $?"
printf '0123456789' | xxd -s -2
echo "status $?"
## tools: xxd

#### xxd -c and -g lay out the groups
printf '0123456789abcdefghij' > f
xxd -c 5 -g 3 f
xxd -g 1 f
xxd -g 0 -c 8 f
xxd -g 4 f
xxd -cols 10 -groupsize 5 f
## tools: xxd

#### xxd -u uppercase and -o offset
printf '\252\273\314\335\356\377hello' > f
xxd -u f
xxd -o 0x100 f
xxd -d -s 2 f
## tools: xxd

#### xxd -i C include from a file and from standard input
printf 'hello, world!\n' > data.bin
xxd -i data.bin
xxd -i < data.bin
xxd -i -C data.bin
xxd -i -n my_blob -c 4 data.bin
cp data.bin 9lives.x-y
xxd -i -u 9lives.x-y
## tools: xxd cp

#### xxd -i on an empty file
: > empty
xxd -i empty
## tools: xxd

#### xxd -b bits
printf 'AZ\000\377\200\001abc' | xxd -b
printf 'AZ\000\377' | xxd -b -c 2
## tools: xxd

#### xxd -e little-endian groups
printf '0123456789abcdefXYZ' > f
xxd -e f
xxd -e -g 2 f
xxd -e -g 8 f
## tools: xxd

#### xxd writes to an outfile
printf 'abc' > f
xxd f out.txt
echo "status $?"
xxd -r out.txt
echo
## tools: xxd

#### xxd -a skips lines of zeros
printf '\000%.0s' {1..80} > z
printf 'x' >> z
xxd -a z
printf '\000%.0s' {1..64} | xxd -a
printf '\000%.0s' {1..48} | xxd -a
printf '\000%.0s' {1..32} | xxd -a -c 8
## tools: xxd

#### xxd on empty input
printf '' | xxd
printf '' | xxd -p
printf '' | xxd -i
echo done
## tools: xxd

#### xxd errors and statuses
xxd nofile
echo "status $?"
xxd -Q f
echo "status $?"
printf 'a' | xxd -c 300
echo "status $?"
printf 'a' | xxd -e -g 3
echo "status $?"
printf 'a' | xxd -r -b
echo "status $?"
xxd a b c
echo "status $?"
xxd -v
echo "status $?"
## tools: xxd

#### hexdump default 16-bit words
printf 'hello world\n' | hexdump
printf 'abc' | hexdump
## tools: hexdump

#### hexdump -C canonical with bytes from 0x80
printf 'Hello, world!\n\000\001\200\377 ~\177xyz' | hexdump -C
## tools: hexdump

#### hd is hexdump -C
printf 'abcdefghijklmnopqrstuvwxyz' | hd
## tools: hd

#### hexdump collapses repeated lines unless -v
printf '%048dXY' 0 > f
hexdump f
hexdump -C f
hexdump -v -C f
## tools: hexdump

#### hexdump -n and -s
printf '0123456789abcdefghijklmnopqrstuvwxyz' > f
hexdump -n 5 -C f
hexdump -s 30 -C f
hexdump -s 0x10 -n 4 f
hexdump -s 1K f
hexdump -s 100 f
echo "status $?"
## tools: hexdump

#### hexdump -s on a pipe cannot seek
printf 'abc' | hexdump -s 1
echo "status $?"
hexdump -s 1 -C < f
## tools: hexdump
## file: f
abcdef
## end

#### hexdump one-byte and two-byte formats
printf 'ABCxyz\n\t\200\377' > f
hexdump -b f
hexdump -c f
hexdump -d f
hexdump -o f
hexdump -x f
hexdump -b -C f
## tools: hexdump

#### hexdump -e format strings
printf 'hello world\n' > f
hexdump -e '16/1 "%02x" "\n"' f
hexdump -e '"%_ad: " 4/1 "%_c" "\n"' f
hexdump -e '2/1 "%_u|" "\n"' -e '"%_Ad\n"' f
hexdump -e '/4 "%08X|" "\n"' f
hexdump -e '1/2 "%5d "' -e '"\n"' f
hexdump -e '"%07.7_ax " 3/1 "%3s" "\n"' f
hexdump -e '4/1 "%c"' -e '"|\n"' f
hexdump -e '"%.3s|"' f
echo
## tools: hexdump

#### hexdump -e floats and signed values
printf '\000\000\200\077\000\000\040\300\377\376\375\374\001\000\000\000' > f
hexdump -e '4/4 "%f " "\n"' f
hexdump -e '2/8 "%e " "\n"' f
hexdump -e '8/2 "%d " "\n"' f
hexdump -e '16/1 "%+d," "\n"' f
## tools: hexdump

#### hexdump -e bad formats
hexdump -e '"%q"' f
echo "status $?"
hexdump -e '1/1 "%5.2f"' f
echo "status $?"
hexdump -e '"%s"' f
echo "status $?"
hexdump -e '4 "%x' f
echo "status $?"
hexdump -e '/1 "%x%x"' f
echo "status $?"
## tools: hexdump
## file: f
abc
## end

#### hexdump errors and statuses
hexdump nofile
echo "status $?"
printf 'abc' > a
hexdump nofile a
echo "status $?"
hexdump -n x a
echo "status $?"
hexdump -z a
echo "status $?"
mkdir d
hexdump d
echo "status $?"
## tools: hexdump mkdir

#### hexdump on empty input
printf '' | hexdump
printf '' | hexdump -C
printf '' | hexdump -e '"%_Ax\n"'
echo done
## tools: hexdump

#### mkfifo makes a named pipe
mkfifo p
test -p p && echo fifo
[ -f p ] || echo 'not a regular file'
stat -c '%F %a' p
ls -l p | { read -r mode rest; echo "$mode"; }
## tools: mkfifo stat ls

#### mkfifo -m sets the mode past the umask
mkfifo -m 600 p
mkfifo -m a=rw,u+x q
umask 077
mkfifo r
stat -c '%n %a' p q r
## tools: mkfifo stat

#### mkfifo errors
mkfifo p
mkfifo p
echo "status $?"
mkfifo
echo "status $?"
mkfifo -m xyz q
echo "status $?"
mkfifo -m 1777 q
echo "status $?"
mkfifo nodir/q
echo "status $?"
## tools: mkfifo

#### a FIFO carries data from a writer in the background to a reader
mkfifo p
echo hi > p &
cat p
wait
## tools: mkfifo cat

#### a FIFO with the reader in the background
mkfifo p
cat p > out &
printf 'one\ntwo\n' > p
wait
cat out
## tools: mkfifo cat

#### a FIFO read by a redirection and by several writes
mkfifo p
{ echo a; echo b; echo c; } > p &
while read -r line; do echo "got $line"; done < p
wait
## tools: mkfifo

#### a FIFO opened read-write does not wait
mkfifo p
exec 3<>p
echo buffered >&3
read -r line <&3
echo "$line"
exec 3>&-
## tools: mkfifo

#### od and xxd read a FIFO
mkfifo p
printf 'abc' > p &
od -c p
wait
printf '\001\002' > p &
xxd p
wait
## tools: mkfifo od xxd

#### od on every byte value
for i in {0..255}; do printf "\\$(printf %o $i)"; done > all
od -c all
od -t a all
od -t x1z all
od -A x -t d1 -t u1 -t o1 all
od -t f4 all
od -t f8 all
od -t fL all
od -t d8 -t x8 all
od -w12 -t x4 -t x2z all
od -t x2 -j 7 -N 33 all
od -An -t u2 --endian=big -v all
## tools: od

#### xxd on every byte value
for i in {0..255}; do printf "\\$(printf %o $i)"; done > all
xxd all
xxd -b -c 7 all
xxd -e -c 5 all
xxd -e -c 6 -g 2 all
xxd -e -c 12 -g 8 all
xxd -c 7 -g 2 all
xxd -c 256 -g 3 all
xxd -p -c 7 all
xxd -i -c 5 all
xxd -u -g 5 -c 11 all
xxd all | xxd -r | od -An -t x1 | head -3
xxd -c 7 all | xxd -r -c 7 | xxd -p | head -3
xxd -c 7 all | xxd -r | xxd -p | head -3
## tools: xxd od head

#### hexdump on every byte value
for i in {0..255}; do printf "\\$(printf %o $i)"; done > all
hexdump all
hexdump -C all
hexdump -c all
hexdump -b -d -o -x all
hexdump -e '"%_ad " 8/1 "%_u " "\n"' all
hexdump -e '"%08_ax " 16/1 "%3_c" "\n"' all
hexdump -e '4/4 "%10d" "\n"' all
hexdump -e '4/4 "%10u" "\n"' all
hexdump -e '2/8 "%20ld" "\n"' all
hexdump -e '8/2 "%6o" "\n"' all
hexdump -e '16/1 "%_p"' -e '"\n"' all
hexdump -e '/1 "%c"' all | od -An -c | head -4
hexdump -e '4/4 "%g " "\n"' all
hexdump -e '2/8 "%.3e " "\n"' all
hexdump -s 250 -C all
hexdump -n 17 -x all
## tools: hexdump od head

#### hexdump on lengths around its line width
for n in 1 2 3 7 15 16 17 31 33; do printf '%*s' $n '' | tr ' ' z > f; hexdump f; hexdump -C f; hexdump -x f; hexdump -c f; done
## tools: hexdump tr

#### od on lengths around its line width
for n in 1 2 3 7 15 16 17 31 33; do printf '%*s' $n '' | tr ' ' z > f; od -t x2 f; od -t x4z f; od -t f8 f; od -c -t x8 f; done
## tools: od tr

#### xxd on lengths around its line width
for n in 1 2 3 7 15 16 17 31 33; do printf '%*s' $n '' | tr ' ' z > f; xxd f; xxd -e f; xxd -b f; xxd -p -c 4 f; xxd -i f; done
## tools: xxd tr

#### hexdump and od skip over whole files
printf '%032d' 0 > z32
printf 'abc' > a
hexdump z32 z32 a
hexdump -s 40 z32 z32 a
hexdump -s 64 -C z32 z32 a
hexdump -s 67 z32 z32 a
hexdump -n 40 -C z32 z32 a
hexdump -n 32 z32 z32 a
od -j 64 -c z32 z32 a
od -N 64 z32 z32 a
od -j 67 z32 z32 a
echo "st $?"
## tools: hexdump od

#### hexdump -f reads format strings from a file
printf '# comment\n\n"%%06.6_ao " 12/1 "%%3_u"\n"\\t" "\\n"\n' > fmt
printf 'hello\001world\n' | hexdump -f fmt
hexdump -f nofmt f
echo "st $?"
## tools: hexdump

#### hexdump -e repetitions, byte counts and padding
printf 'abcdefghij' > f
hexdump -e '3/1 "%02x" " | "' -e '"\n"' f
hexdump -e '"[" 2/2 "%04x" "]\n"' f
hexdump -e '1/4 "%08x" 1/2 " %04x" "\n"' f
hexdump -e '"%_Ad"' f
echo
hexdump -e '"%_Ax" "\n"' -e '4/1 "%x-" "\n"' f
hexdump -e '5/1 "%02x " "\n"' -e '"%_Ao\n"' f
hexdump -e '2 "%c" "\n"' f
hexdump -e '"%-5_c|" "\n"' -n 3 f
hexdump -e '/2 "%#x " "\n"' -n 4 f
hexdump -e '/1 "%#o " "\n"' -n 2 f
hexdump -e '/1 "%5.3d|" "\n"' -n 2 f
hexdump -e '/3 "%s|" "\n"' f
hexdump -e '"%5.2s|" "\n"' -n 6 f
## tools: hexdump

#### xxd -r skips garbage and honours -c
printf '00000000: 4142 4344  ABCD\nnot hex at all\n00000010: 45zz46\n0000001a: 47 48 49\n' | xxd -r | od -c
printf 'zz 41 42\n4 3 44\n' | xxd -r -p | od -c
printf '0:41\n1:42\n' | xxd -r | od -c
printf '00000000: 414243444546474849505152535455565758\n' | xxd -r | od -c
printf '00000000: 414243444546474849505152535455565758\n' | xxd -r -c 4 | od -c
printf '0: 41\r\n1: 42\r\n' | xxd -r | od -c
## tools: xxd od

#### xxd option spellings and odd values
printf 'abc' > f
xxd -ps f
xxd -s1 -l1 f
xxd -l -1 f
xxd -c 0 f
xxd -g 300 f
xxd -- f
xxd -autoskip -u f
xxd -s +-1 f
echo "st $?"
xxd -o -2 f
xxd -o -2 -d f
xxd -c 8 -e -g 4 f
printf 'hello' | xxd -i -
printf 'hello' | xxd -n x -i
xxd -i -n 9x f
xxd -r -s -2 <<< '0000003: 41' | od -c
## tools: xxd od

#### od option combinations
printf 'hello world, this is od\n' > f
od -tx1 -Ad -w8 -v f
od -t x1 -t a -w8 f
od -j1 -N1K -t c f
od -j 2b f
echo "st $?"
od -N 0x5 -c f
od --read-bytes=3 -c f
od --format=x2 --address-radix=n f
od -s -w6 f
od -t u1 -t d1 -t o1 -t x1 -w4 f
od -t c -t x2z -w8 f
od -t f4 -t x1 -w4 f
od -w1 -c -N3 f
od -S 2 -N 8 f
od --strings f
od -t dI -t dL -t oC -t xS f
od -vtx1 -N3 f
od -tx1 --width=0 -N 3 f
od -Ax -tx -N4 f
## tools: od

#### pseudo-random bytes through od, xxd and hexdump
x=7; s=''
for ((i=0; i<700; i++)); do x=$(( (x*1103515245+12345) % 2147483648 )); s+=$(printf '\\%03o' $(( (x>>16) & 255 ))); done
printf "$s" > r
printf '%0100d' 0 >> r
printf "$s" >> r
od r; od -c r; od -t a r; od -t f4 r; od -t f8 -t x8 r; od -t fL r; od -t d1 -t d2 -t d4 -t d8 -w8 r; od -t o8 -t u8 -t x1z r
od -S 3 r; od -S 1 -N 200 r; od -A d -t x2 --endian=big -j 100 -N 300 r
xxd r; xxd -b r; xxd -e r; xxd -p r; xxd -i r; xxd -a r; xxd -c 13 -g 3 -u r; xxd -e -g 2 -c 10 r
xxd r | xxd -r | cmp - r && echo same1; xxd -p r | xxd -r -p | cmp - r && echo same2
hexdump r; hexdump -C r; hexdump -c r; hexdump -b r; hexdump -d r; hexdump -o r; hexdump -x r
hexdump -e '"%_ad " 8/1 "%_u " "\n"' r; hexdump -e '2/8 "%e " "\n"' r; hexdump -e '4/4 "%g " "\n"' r
hexdump -e '4/4 "%-14.6G|" "\n"' r; hexdump -e '2/8 "%+.10f " "\n"' r | head -50
## tools: od xxd hexdump cmp head

#### kill a job waiting on a FIFO
mkfifo p
cat p &
kill %1
wait
echo "status $?"
## tools: mkfifo cat

#### writer blocked until killed
mkfifo p
echo hi > p &
kill $!
wait $!
echo "status $?"
## tools: mkfifo

#### FIFO with head closing early
mkfifo p
{ for i in 1 2 3 4 5; do echo line$i; done; } > p &
head -n 2 p
wait
## tools: mkfifo head

#### tail and grep and wc on a FIFO
mkfifo p
printf '1\n2\n3\n' > p &
tail -n 1 p
wait
printf 'x\ny\nx\n' > p &
grep -c x p
wait
printf 'abc' > p &
wc -c < p
wait
## tools: mkfifo tail grep wc

#### hexdump reads a FIFO
mkfifo p
printf 'hello' > p &
hexdump -C p
wait
## tools: mkfifo hexdump

#### cp -r copies a FIFO as a FIFO
mkdir d
mkfifo d/p q
echo hi > f
cp -r d d2
cp -r q f
cp -a q q2
stat -c '%n %F' d2/p f q2
## tools: mkfifo cp stat mkdir

#### a file as standard input can be sought in
printf '0123456789abcdef' > f
od -j 4 -N 4 -c < f
hexdump -s 4 -n 4 -C < f
xxd -s 4 -l 4 < f
xxd -s +4 -l 4 < f
{ read -r -n 2 x; xxd -s +2 -l 3; } < f
{ read -r -n 2 x; xxd -s -3; } < f
{ read -r -n 2 x; hexdump -s 1 -n 2 -C; } < f
{ read -r -n 2 x; od -c; } < f
## tools: od xxd hexdump

#### xxd outfile errors and -r into an outfile
mkdir d
printf 'abc' > f
xxd f d
echo "st $?"
xxd f nodir/x
echo "st $?"
xxd -r -p f out
echo "st $?"
od -c out
echo '616263' | xxd -r -p - out2
od -c out2
xxd -i f -
## tools: xxd od mkdir

#### xxd -h and the versions
xxd -h
echo "st $?"
xxd -v 2>&1
od --version | head -1
hexdump -V
## tools: xxd od hexdump head

#### od -w with one byte and with many
printf 'abcdefghij' > f
od -A n -t c -w1 f
od -w64 -t x1 f
od -t a -w3 f
## tools: od

#### xxd at its widest
printf '%0300d' 5 > f
xxd -c 256 f | head -2
xxd -p -c 200 f
xxd -i -c 40 f | head -3
## tools: xxd head

#### hexdump %_A alone, -n 0 and an empty format
printf 'abcdefgh' > f
hexdump -e '"%_Ad|\n"' f
hexdump -e '"x" "%_Ax\n"' -e '8/1 "%c"' -e '"\n"' f
hexdump -n 0 -C f
echo "st $?"
hexdump -e '""' f
echo "st $?"
## tools: hexdump

#### a FIFO without a writer waits until the command's time runs out
mkfifo p
cat p
echo after
## tools: mkfifo cat
## bash: skip bash waits for a writer forever
## k-differs: the wait for a FIFO's writer is bounded by K's wall-time limit per command
## k-limits: wall_time=0.5
## k-stdout:
## end
## k-stderr:
bash: line 2: command exceeded the wall-time limit
## end
## k-status: 1
