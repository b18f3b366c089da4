# compgen, complete, compopt (bash 5.2's programmable completion builtins), non-interactive.

#### compgen -b with and without a prefix
compgen -b pu; echo $?
compgen -b zz; echo $?
compgen -b | while read -r b; do printf '%s ' "$b"; done; echo

#### compgen -W words, -P -S and -X
compgen -W "alpha beta alps" al
compgen -W "a b"
compgen -W "a b" -P "<" -S ">"
compgen -W "ab ac" -X "*c"
compgen -W "ab ac" -X "!*c"
compgen -W "ab ac" -X "&c" a
compgen -W "x" y; echo $?

#### compgen -v -e -A variable -A arrayvar
x1=1; x2=2; arr=(a)
compgen -v x
compgen -A variable x2
compgen -e PAT
compgen -A arrayvar ar

#### compgen -f and -d on the directory
compgen -f
echo ---
compgen -f fi
compgen -f dir1/
compgen -d
compgen -A directory d
compgen -G "f*"
compgen -f nothing; echo $?
## seed: dir1/ dir2/ file1 dir1/x .hid

#### compgen -o plusdirs, dirnames, default
compgen -o plusdirs -W "zz"
compgen -o dirnames nomatch; echo $?
compgen -o dirnames di
compgen -o default fi
## seed: dir1/ dir2/ file1

#### compgen actions in bash's order
compgen -A keyword -A builtin e
compgen -k | while read -r k; do printf '%s ' "$k"; done; echo
f1() { :; }
compgen -A function f
alias ll=ls
compgen -a
compgen -c pus
compgen -A signal SIGI
compgen -A shopt ext
compgen -A setopt err
compgen -A export HOM
compgen -A enabled tim
compgen -A helptopic tim
compgen -A disabled; echo $?
enable -n times
compgen -A disabled

#### compgen -F runs a function and reads COMPREPLY
f() { COMPREPLY=("got $2" second); }
compgen -F f x; echo $?
compgen -F nosuch x; echo $?

#### compgen errors
compgen -x; echo $?
compgen -A nosuch; echo $?
compgen -o bad; echo $?
compgen -W; echo $?
compgen; echo $?

#### complete stores and prints specifications
complete -W "a b" -o nospace -P "x" foo
complete -p
complete -A function -F _f -abc -o default bar baz
complete -p bar
complete -p
complete -p nope; echo $?
complete -r baz
complete -r nope; echo $?
complete -D -f
complete -E -d
complete
complete -A signal -A shopt -A arrayvar -X "!*.c" -G "*.c" -C "cmd" -S ";" q
complete -p q
complete
complete -r
complete -p; echo $?
complete -W "it's" w
complete -p w

#### complete prints every action letter and -I
complete -j -e -v -k -s -u -g -d -f -c z
complete -I -W x
complete -p

#### complete errors
complete -F; echo $?
complete -o bad x; echo $?
complete -A nosuch x; echo $?
complete -Z; echo $?

#### compopt changes and shows a specification's options
complete -W "a b" -o nospace foo
compopt -o nosort foo
complete -p foo
compopt +o nospace foo
complete -p foo
compopt foo
compopt -o bad foo; echo $?
compopt nope; echo $?
compopt; echo $?
complete -D -f
compopt -o filenames -D
complete -p -D

#### a subshell's specifications are its own
complete -W a foo
( complete -W b foo; complete -p foo )
complete -p foo

#### compgen -W expands its words with the shell's quoting
opts="--all --almost"
compgen -W '$opts --bare' -- --al
compgen -W '"a b" c$((1+1)) $(printf x)' 
compgen -W '*' ; echo $?
IFS=:; v="p:q"; compgen -W '$v'
