# Here-documents: <<, <<-, quoted delimiters, expansions inside, several on one line.

#### here-document to a loop
while read -r l; do echo "> $l"; done <<EOF
alpha
beta
EOF

#### here-document expands variables and command substitution
name=K
while read -r l; do echo "$l"; done <<EOF
hello $name
sum $((1 + 2)) and $(echo sub)
EOF

#### quoted delimiter suppresses expansion
name=K
while IFS= read -r l; do echo "$l"; done <<'EOF'
hello $name $(echo no) `echo no`
EOF

#### double-quoted delimiter suppresses expansion
x=1
while IFS= read -r l; do echo "$l"; done <<"END"
$x \$x
END

#### partly quoted delimiter suppresses expansion
x=1
while IFS= read -r l; do echo "$l"; done <<E\OF
$x
EOF

#### backslash escapes in an unquoted here-document
while IFS= read -r l; do echo "$l"; done <<EOF
a\$b \`c\` \\ \n "q" 'q'
EOF

#### backslash newline continues a line in an unquoted here-document
while IFS= read -r l; do echo "$l"; done <<EOF
one \
two
EOF

#### dash strips leading tabs
while IFS= read -r l; do echo "[$l]"; done <<-EOF
	indented
		twice
	EOF

#### dash does not strip spaces
while IFS= read -r l; do echo "[$l]"; done <<-EOF
  spaces
EOF

#### here-document written to a file with exec redirection
{
while IFS= read -r l; do echo "$l"; done <<EOF
line one
line two
EOF
} > out.txt
while read -r l; do echo "file: $l"; done < out.txt

#### two here-documents on one line
while read -r a; do echo "1:$a"; done <<A; while read -r b; do echo "2:$b"; done <<B
first
A
second
B

#### here-document on a command inside a pipeline
while read -r l; do echo "$l"; done <<EOF | while read -r m; do echo "piped $m"; done
x
EOF

#### here-document in a function
f() {
  while read -r l; do echo "f: $l"; done <<EOF
$1
EOF
}
f arg1
f arg2

#### here-document read by read builtin
read -r first rest <<EOF
one two three
EOF
echo "$first|$rest"

#### empty here-document
while read -r l; do echo "never $l"; done <<EOF
EOF
echo done

#### here-document with the delimiter inside a line is not the end
while read -r l; do echo "$l"; done <<EOF
not EOF here
EOF

#### delimiter with trailing spaces does not end the document
while IFS= read -r l; do echo "[$l]"; done <<EOF
a
EOF 
EOF

#### here-document ended by end of file gives a warning
while read -r l; do echo "$l"; done <<EOF
unterminated

#### here-document preserves blank lines
while IFS= read -r l; do echo "[$l]"; done <<EOF
a

b
EOF

#### here-document with a quoted delimiter keeps backslashes
while IFS= read -r l; do echo "$l"; done <<'EOF'
a\tb \\ \$
EOF

#### here-document in command substitution
x=$(while read -r l; do echo "$l"; done <<EOF
inside
EOF
)
echo "[$x]"

#### redirections apply left to right so <&3 before 3<< fails
read -r x <&3 3<<EOF
on-three
EOF
echo "[$x]"

#### here-document to a specific descriptor
read -r x 3<<EOF <&3
on-three
EOF
echo $x

#### here-document after other redirections
while read -r l; do echo "$l"; done <<EOF 2>/dev/null
mixed
EOF

#### here-document with parameter operations
p=/a/b/c.txt
while read -r l; do echo "$l"; done <<EOF
${p##*/} ${p%/*} ${#p}
EOF

#### here-document in a for loop body
for i in 1 2; do
  while read -r l; do echo "$i:$l"; done <<EOF
v$i
EOF
done

#### here-document with single quotes inside stays literal quotes
while IFS= read -r l; do echo "$l"; done <<EOF
it's "fine"
EOF

#### here-document delimiter with a dash
while read -r l; do echo "$l"; done <<END-OF-TEXT
ok
END-OF-TEXT

#### here-document and then more commands on the next line
read -r v <<EOF
val
EOF
echo "after $v"

#### here-document in a case branch
case x in
  x) while read -r l; do echo "case: $l"; done <<EOF
in case
EOF
  ;;
esac

#### here-document in an if condition
if read -r v <<EOF
cond
EOF
then echo "then $v"; fi

#### here-string and here-document together
read -r a <<< "from-string"
read -r b <<EOF
from-doc
EOF
echo "$a $b"

#### here-document with tabs stripped and expansion
v=X
while IFS= read -r l; do echo "[$l]"; done <<-EOF
	val=$v
	EOF

#### here-document with arithmetic and braces
n=4
while IFS= read -r l; do echo "$l"; done <<EOF
{a,b} $((n*n)) *
EOF
## seed: star.txt
