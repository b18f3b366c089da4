# select menus (bash's layout, PS3, REPLY, the end of input), and functions printed by
# declare -f as bash prints them: `;` after commands, loop bodies, elif as a nested if,
# background commands, subshells, dup redirections with their descriptor.

#### select picks by number; other answers give an empty value; EOF ends it with 1
printf '2\n\nx\n9\n' | { select v in apple banana "c d"; do echo "v=[$v] REPLY=[$REPLY]"; done; echo "st=$?"; }

#### select with PS3 and break
printf '1\n' | { PS3="pick: "; select v in a b; do echo "got $v"; break; done; echo "st=$?"; }

#### select lays a long menu out in columns
select v in $(seq 30); do break; done </dev/null; echo st=$?
COLUMNS=40; select v in $(seq 12) longer-item; do break; done </dev/null
COLUMNS=20; select v in aaaaaaaaaaaa b c d e f g h i j k; do break; done </dev/null
## status: 1
## tools: seq

#### select over the positional parameters, and with no words
printf '1\n' | { set -- p q; select v; do echo $v; break; done; }
select v in; do echo x; done </dev/null; echo st=$?

#### select with continue, numbers with blanks and signs, and read's backslashes
printf '1\n2\n' | { select v in a b; do echo "$v"; [ "$v" = b ] && break; continue; done; }
printf ' 2 \n+1\n' | { select v in a b; do echo "[$v]"; done; }
printf 'a\\\nb\n' | { select v in a b; do echo "[$REPLY]"; break; done; }

#### declare -f prints lists, loops and conditionals as bash
f(){ if true; then echo a; echo b; elif false; then echo c; else echo d; echo e; fi; case x in x) echo 1; echo 2;; y) echo 3;; esac; { echo g; echo h; }; ( echo s; echo t ); echo bg & echo last; }; declare -f f
g(){ until false; do echo u; done; for ((i=0;i<1;i++)); do echo z; done; [[ -n x ]] && echo y || echo n; }; declare -f g
h(){ for i in a; do echo $i; break; done; select v in a; do echo $v; break; done; while true; do echo; break; done; }; declare -f h

#### declare -f prints background commands, elif chains and redirections as bash
k(){ sleep 1 & }; declare -f k
m(){ if a; then b; elif c; then d; elif e; then f; fi; }; declare -f m
n(){ echo x | cat; echo y >/dev/null 2>&1; }; declare -f n
p(){ cat <&3 3<&- 4>&-; echo >&2 x; }; declare -f p
