# The seed's shell examples, verbatim (shared/seeds/000_10d2dbcd7a7ab878.txt), each followed by a
# language-only probe of its effect. Cases marked `## tools:` also need the external tool set
# (cat, grep, mkdir, basename: the next issue); bash gets the host's tools for them.

#### seed: echo note into a file under home
echo note > ~/work/note.txt
read -r line < ~/work/note.txt
echo "$line"
## seed: work/

#### seed: grep with input redirection
grep alpha < notes.txt
## tools: grep
## file: notes.txt
alpha one
beta two
alpha three
## end

#### seed: cat into a file from a quoted here-document
cat > file <<'EOF'
literal $HOME and `cmd`
EOF
while IFS= read -r l; do echo "$l"; done < file
## tools: cat

#### seed: if test -f then grep
if test -f notes.txt; then grep alpha notes.txt; fi
## tools: grep
## file: notes.txt
alpha
beta
## end

#### seed: if test -f on a missing file
if test -f notes.txt; then grep alpha notes.txt; fi
echo "status $?"

#### seed: mkdir -p with brace expansion
mkdir -p app/{src,test}
test -d app/src && test -d app/test && echo both-made
## tools: mkdir

#### seed: for over *.ts with basename
for file in *.ts; do basename "$file"; done
## tools: basename
## seed: index.ts util.ts notes.md

#### seed: bounded while loop with test and arithmetic
i=0; while test "$i" -lt 3; do echo "$i"; i=$((i + 1)); done

#### seed: printf repeats the format for remaining args
printf "%s\n" one two

#### seed: printf basic conversions, width, alignment, zero padding, percent
printf "%s|%d|%5s|%-5s|%05d|%%\n" str 42 right left 7

#### seed: trimming a path
path=/home/agent/work/report.final.md
echo "${path##*/}"
echo "${path%/*}"

#### seed: default value and length probe
echo "${VAR:-fallback}"
VAR=value
echo "${VAR:-fallback}" "${#VAR}"

#### seed: last status
false
echo $?
true
echo $?

#### seed: arithmetic expansion
echo $((2 + 3 * 4))

#### seed: command substitution with $() and backticks
echo "$(echo modern)" `echo classic`

#### seed: unquoted field splitting and quote-aware variables
words="one two  three"
for w in $words; do echo "[$w]"; done
for w in "$words"; do echo "[$w]"; done

#### seed: glob expansion over the file system
echo *.md
## seed: a.md b.md c.txt

#### seed: bounded brace expansion
echo {1..5} {a,b}{x,y}

#### seed: stdin, stdout and stderr redirection
echo to-stdout
echo to-stderr >&2
echo to-file > out.txt
read -r l < out.txt
echo "file: $l"

#### seed: heredoc stdin
while read -r l; do echo "line: $l"; done <<EOF
first
second
EOF

#### seed: pipes
echo piped | while read -r l; do echo "got $l"; done

#### seed: top-level if branches and for in loops
if true; then echo then-branch; else echo else-branch; fi
for x in a b c; do echo "for $x"; done

#### seed: bounded until loop
n=3
until [ "$n" -eq 0 ]; do echo "$n"; n=$((n - 1)); done

#### seed: source a profile exporting variables, changing cwd and options
printf 'export PROFILE_VAR=loaded\ncd work\nset -o noglob\n' > profile.sh
source profile.sh
echo "$PROFILE_VAR $PWD"
echo *
## seed: work/ work/x.txt

#### seed: dot a profile file
echo 'DOTTED=yes' > profile.sh
. profile.sh
echo "$DOTTED"

#### seed: sh file and bash file run in a child shell state
printf 'cd work\nexport CHILD=1\nset -f\necho "child args: $1 $2"\n' > child.sh
sh child.sh a b
bash child.sh c d
echo "parent: $PWD [${CHILD-unset}]"
echo *.sh
## seed: work/

#### seed: bash -c with positional parameters
bash -c 'echo "$0 got $1 and $2"' prog first second

#### seed: read NAME, read FIRST REST and read -r RAW
read NAME <<< "single"
read FIRST REST <<< "one two three"
read -r RAW <<< 'raw\text'
echo "$NAME|$FIRST|$REST|$RAW"

#### seed: type and command are builtins
type -t type command echo
command -v echo

#### seed: export and unset
export SEEDX=1
bash -c 'echo "child SEEDX=$SEEDX"'
unset SEEDX
bash -c 'echo "child SEEDX=[$SEEDX]"'

#### seed: set and test
set -- a b
test $# -eq 2 && echo two-args
[ -n "$1" ] && echo first-set
[[ $2 == b ]] && echo second-b

#### seed: pwd and cd
cd work
pwd
cd ..
pwd
## seed: work/

#### seed: test -x reads mode bits
test -x tool.sh && echo executable
test -x data.txt || echo not-executable
## file: tool.sh 755
echo tool
## end
## file: data.txt 644
data
## end
