# ulimit on real resource limits (getrlimit/setrlimit), as bash 5.2 on Linux. Both shells start
# from the same limits (the test process's, which bash inherits).

#### ulimit -a lists every limit
ulimit -a
echo ---
ulimit -aH

#### ulimit reports one limit, -f by default
ulimit
ulimit -n
ulimit -Hn
ulimit -Sn
ulimit -s
ulimit -t
ulimit -v
ulimit -x
ulimit -p
ulimit -c -d

#### several options print descriptions
ulimit -n -s
ulimit -H -t -f

#### lowering the soft limit and reading it back
ulimit -Sn 100; echo $?
ulimit -n
ulimit -Hn
ulimit -Sn hard; ulimit -n
ulimit -Sn 100; ulimit -Sn soft; ulimit -n
ulimit -St 50; ulimit -t; ulimit -Ht
ulimit -Sf 10; ulimit -f
ulimit -Sv 1000000; ulimit -v
ulimit -Sc 0; ulimit -c
ulimit -Sn200; ulimit -n

#### an operand is the last option's argument
ulimit -n 100 2; echo $?
ulimit -n
ulimit -Hn

#### the kernel's refusals in bash's words
ulimit -Hn 100
ulimit -Hn 200; echo $?
ulimit -Sn 300; echo $?
ulimit -Hn unlimited; echo $?
ulimit -p 10; echo $?
ulimit -Sn 99999999999999999999999; echo $?

#### a subshell's limit is its own
( ulimit -Sn 123; ulimit -n )
ulimit -Sn 77
echo "$(ulimit -n)"

#### argument errors
ulimit -n abc; echo $?
ulimit -n 12x; echo $?
ulimit -b; echo $?
ulimit -y; echo $?
