# Pathname expansion over the VFS: * ? [...], hidden files, directories, nullglob, failglob,
# dotglob, globstar, nocaseglob, noglob (set -f), extglob.

#### star matches files in sorted order
echo *
## seed: c.txt a.txt b.txt

#### star with a suffix
echo *.ts
## seed: app.ts lib.ts readme.md

#### question mark matches one character
echo ?.txt
## seed: a.txt ab.txt b.txt

#### character class and range
echo [ab]* [!ab]*
## seed: a1 b1 c1 d1

#### unmatched glob stays literal
echo *.nomatch

#### hidden files are not matched by star
echo *
## seed: .hidden visible

#### explicit dot matches hidden files
echo .h*
## seed: .hidden .hx visible

#### dot and dot-dot are not matched by .*
echo .*
## seed: .a .b

#### glob in a subdirectory
echo src/*.c
## seed: src/a.c src/b.c src/c.h

#### glob over directory names
echo */
## seed: d1/ d2/ f.txt

#### glob in the middle of a path
echo */x.txt
## seed: a/x.txt b/x.txt c/y.txt

#### nullglob removes unmatched patterns
shopt -s nullglob
echo start *.none end
set -- *.none
echo $#

#### failglob makes an unmatched pattern an error
shopt -s failglob
echo *.none
echo "status $?"

#### dotglob lets star match hidden files
shopt -s dotglob
echo *
## seed: .h v

#### globstar matches across directories
shopt -s globstar
echo **/*.txt
## seed: a.txt d/b.txt d/e/c.txt d/e/f.md

#### without globstar double star is a single star
echo **/*.txt
## seed: a.txt d/b.txt d/e/c.txt

#### globstar double star alone lists everything
shopt -s globstar
echo **
## seed: a d/b d/e/c

#### nocaseglob
shopt -s nocaseglob
echo *.TXT
## seed: a.txt B.TxT c.md

#### set -f disables globbing
set -f
echo *
set +f
echo *
## seed: x y

#### quoted parts of a pattern are literal
echo "*".txt '?'.txt
## seed: a.txt b.txt

#### escaped star is literal
echo \*.txt
## seed: a.txt

#### glob from a variable
p='*.log'
echo $p
echo "$p"
## seed: one.log two.log

#### glob results are not split further
for f in *; do echo "[$f]"; done
## file: 'with space.txt'
## end
## seed: plain.txt

#### glob with a bracket expression containing a class
echo [[:digit:]]* [[:upper:]]*
## seed: 1a 2b Cc dd

#### glob sorts by bytes in the C locale
echo *
## seed: b B a A _ 1

#### glob on a directory that does not exist
echo nodir/*

#### glob with a trailing slash matches only directories
echo d*/
## seed: dir1/ dfile dir2/

#### glob in an assignment is not expanded
x=*.txt
echo "$x"
## seed: a.txt

#### glob in a redirection target that matches several files is ambiguous
echo x > *.txt
echo "status $?"
## seed: a.txt b.txt

#### glob in test -f with no match
if test -f *.none; then echo yes; else echo no; fi

#### glob in a case word is not expanded
case *.txt in '*.txt') echo literal;; esac
## seed: a.txt

#### extglob alternatives
shopt -s extglob
echo @(a|b).txt
echo !(*.txt)
## seed: a.txt b.txt c.txt d.md

#### extglob plus and star
shopt -s extglob
echo +(ab).x *(ab)c.x
## seed: ab.x abab.x c.x abc.x

#### glob with dot-dot path
echo ../agent/*.txt
## seed: a.txt

#### glob under an absolute path from HOME
echo $HOME/*.md "$HOME"/*.md
## seed: n.md

#### glob with tilde prefix
echo ~/*.md
## seed: n.md m.md

#### glob bracket with a literal dash and bang
echo [-x]* [!-]*
## seed: -a xb cc

#### glob matches nothing inside an empty directory
echo empty/*
## seed: empty/

#### count files with a glob into positionals
set -- *.ts
echo $#
## seed: a.ts b.ts c.ts d.js

#### nullglob in a for loop skips the body
shopt -s nullglob
for f in *.none; do echo "never $f"; done
echo done

#### glob does not match a slash with star
echo a*c
## seed: a/c abc

#### GLOBIGNORE hides matches
GLOBIGNORE='*.bak'
echo *
## seed: a.txt a.bak b.txt

#### shopt prints an option state
shopt nullglob
shopt -s nullglob
shopt nullglob
shopt -q nullglob && echo quiet-on

#### shopt with an unknown option
shopt -s nosuchopt
echo "status $?"

#### glob with star matching empty string
echo a*
## seed: a ab

#### bracket with no closing bracket is literal
echo [ab
## seed: a b
