"""env, printenv, id, whoami, hostname, uname, date, which, help, nproc: against GNU where the
appliance and the host agree, and against K's documented virtual values where they must not."""

from __future__ import annotations

import os
import platform

import pytest
from differential import Case, Dir, File, assert_same, run_k

F = {"a": "x\n", "d/": Dir(), "old": File("o\n", mtime=1000000000)}

ENV = [
    Case("env_i_cmd", "env -i NAME=value printenv NAME", F),
    Case("env_i_list", "env -i A=1 B=2 env", F),
    Case("env_assign_cmd", "env FOO=bar printenv FOO; echo ${FOO-unset}", F),
    Case("env_scoped", "env X=1 true; echo ${X-unset}", F),
    Case("env_unset", "export Q=1; env -u Q printenv Q; echo $?", F),
    Case("env_unset_list", "export Q=1; env -u Q env | grep -c ^Q=", F),
    Case("env_grep_home", "env | grep ^HOME=", F),
    Case("env_missing_cmd", "env nosuchcmd; echo $?", F),
    Case("env_bad_option", "env -z; echo $?", F),
    Case("env_u_missing", "env -u; echo $?", F),
    Case("env_status", "env sh -c 'exit 3'; echo $?" if False else "env false; echo $?", F),
    Case("env_null", "env -i -0 A=1 B=2 | od -c | head -1" if False else "env -i -0 A=1 B=2 | tr '\\0' '|'", F),
    Case("env_i_empty", "env -i; echo $?", F),
    Case("env_tool_args", "env -i A=b cat a", F),
    Case("env_new_var_visible", "env Z=9 env | grep ^Z=", F),
    Case("env_split_string", "env -S 'a=1 printenv a'; env -S'printf %s\\\\n x y'; env -S 'echo \"a b\" c'; "
         "env -S 'echo a\\\\tb'; env -S 'echo a #comment'; env -S '-i b=2 printenv b'; env -iS 'c=3 printenv c'; "
         "env -S 'echo \\\\c not'; env --split-string='echo 1' 2; env -S 'echo a\\\\_b \"c\\\\_d\"'; "
         "env -S 'echo ${NOPE}x'", F),
    Case("env_split_string_errors", "env -S 'echo \"unterminated'; echo $?; env -S 'echo \"a\\\\qb\"'; echo $?; "
         "env -S 'echo $HOME'; echo $?", F),
    Case("env_chdir", "env -C d pwd; env -C nope pwd; echo $?; env -C a pwd; echo $?", F),
    Case("printenv_one", "printenv HOME", F),
    Case("printenv_many", "printenv USER HOME", F),
    Case("printenv_missing", "printenv NOPE; echo $?", F),
    Case("printenv_unexported", "V=1; printenv V; echo $?", F),
    Case("printenv_exported", "export V=1; printenv V", F),
    Case("printenv_bad", "printenv -x; echo $?", F),
]
IDENT = [
    Case("id_root", "id", F), Case("id_u", "id -u", F), Case("id_g", "id -g", F), Case("id_un", "id -un", F),
    Case("id_gn", "id -gn", F), Case("id_G", "id -G", F), Case("id_bad", "id -x; echo $?", F),
    Case("id_conflict", "id -u -g; echo $?", F), Case("id_name_only", "id -n; echo $?", F),
    Case("id_nosuch", "id nosuchuser; echo $?", F), Case("id_root_name", "id -u root", F),
    Case("id_user", "id -u", F, user=1000),
    Case("whoami", "whoami", F), Case("whoami_extra", "whoami x; echo $?", F),
    Case("whoami_bad", "whoami -x; echo $?", F),
    Case("uname_bad", "uname -x; echo $?", F), Case("uname_extra", "uname a; echo $?", F),
    Case("uname_s", "uname", F), Case("uname_m", "uname -m", F), Case("uname_o", "uname -o", F),
    Case("nproc", "nproc", F), Case("nproc_all", "nproc --all", F), Case("nproc_bad", "nproc -x; echo $?", F),
    Case("nproc_extra", "nproc 3; echo $?", F),
]
DATE = [
    Case("date_epoch", "date -d @0", F), Case("date_format", "date -d @1704164645 +%Y-%m-%d_%H:%M:%S", F),
    Case("date_u", "date -u -d @86399 '+%F %T %Z %z'", F),
    Case("date_iso", "date -d '2024-03-05 10:20:30' -I", F),
    Case("date_iso_seconds", "date -d '2024-03-05T10:20:30Z' -Iseconds", F),
    Case("date_iso_minutes", "date -d '2024-03-05 10:20' --iso-8601=minutes", F),
    Case("date_rfc_email", "date -R -d '2024-03-05 10:20:30'", F),
    Case("date_default", "date -d '2024-02-29 01:02:03'", F),
    Case("date_reference", "date -r old +%s", F), Case("date_reference_missing", "date -r nope; echo $?", F),
    Case("date_bad", "date -d xyz; echo $?", F), Case("date_bad_option", "date -x; echo $?", F),
    Case("date_rel_days", "date -d '2024-01-30 +3 days' +%F", F),
    Case("date_rel_ago", "date -d '2024-01-01 2 hours ago' '+%F %T'", F),
    Case("date_rel_month", "date -d '2024-01-15 1 month' +%F", F),
    Case("date_ns", "date -d @1.5 +%s.%N", F),
    Case("date_padding", "date -d '2024-03-05 04:05:06' '+%-d %_m %e %j %u %w %a %A %b %B %p %I %y %C'", F),
    Case("date_weeks", "date -d 2024-12-30 '+%V %G %U %W'", F),
    Case("date_literal", "date -d @0 '+%% %n %t x'", F),
    Case("date_zone_offset", "date -d '2024-03-05T10:00:00+02:00' -u +%T", F),
    Case("date_tz_env", "TZ=America/New_York date -d @0 '+%F %T %Z %z %:z'", F),
    Case("date_extra_operand", "date +%s x; echo $?", F),
    Case("date_multiple_formats", "date -I -R; echo $?", F),
    Case("date_now_shape", "date +%Y | grep -c '^20[0-9][0-9]$'", F),
    Case("date_now_same", "[ $(date +%s) -ge 1704164645 ] && echo ok", F),
]
# GNU's free-form date strings: absolute dates with relative items, days of the week, zones,
# numbers, the errors (the forms relative to now are checked by what holds of them, below)
DATE_STRINGS = [
    Case("date_strings_1", 'for s in \'2024-01-01 next monday\' \'2024-01-01 monday\' \'2024-01-03 monday\' \'2024-01-03 next week\' \'2024-01-01 +1 day\' \'2024-01-31 +1 month\' \'2024-01-01 12:30 +1 hour\' \'2024-01-01 tomorrow\' \'2024-01-01 yesterday\' \'2024-01-01 noon\' \'Jan 5 2024\' \'5 Jan 2024\' \'January 5, 2024 3pm\' \'01/05/2024\' \'2024-01-05T10:00:00Z\' \'2024-01-05 10:00 EST\' \'20240105\' \'2024-01-05 1030\' \'@1700000000\' \'2024-01-01 00:00 +0530\'; do printf \'%s => \' "$s"; date -d "$s" \'+%F %T.%N %z %a\' 2>&1; done', F),
    Case("date_strings_1_new_york", 'TZ=America/New_York; export TZ; for s in \'2024-01-01 next monday\' \'2024-01-01 monday\' \'2024-01-03 monday\' \'2024-01-03 next week\' \'2024-01-01 +1 day\' \'2024-01-31 +1 month\' \'2024-01-01 12:30 +1 hour\' \'2024-01-01 tomorrow\' \'2024-01-01 yesterday\' \'2024-01-01 noon\' \'Jan 5 2024\' \'5 Jan 2024\' \'January 5, 2024 3pm\' \'01/05/2024\' \'2024-01-05T10:00:00Z\' \'2024-01-05 10:00 EST\' \'20240105\' \'2024-01-05 1030\' \'@1700000000\' \'2024-01-01 00:00 +0530\'; do printf \'%s => \' "$s"; date -d "$s" \'+%F %T.%N %z %a\' 2>&1; done', F),
    Case("date_strings_2", 'for s in \'2024-01-01 1 week ago\' \'2024-01-01 next friday 9am\' \'2024-02-29 +1 year\' \'2024-01-01 first monday\' \'2024-01-01 third day\' \'2024-01-01 -2 days ago\' \'2024-01-01 next month\' \'2024-01-01 12:00:00.5\' \'Mon, 01 Jan 2024 10:00:00 +0000\' \'2024-01-01 fortnight\' \'2024-01-01 10am tomorrow\' \'sunday 2024-01-01\' \'2024-1-1\' \'24-01-01\' \'Jan 2024\' \'2024-01-01 UTC+2\' \'TZ="America/New_York" 2024-01-01 10:00\' \'2024-01-01 10\' \'2024-01-01 24:00\' \'2024-02-30\'; do printf \'%s => \' "$s"; date -d "$s" \'+%F %T.%N %z %a\' 2>&1; done', F),
    Case("date_strings_2_new_york", 'TZ=America/New_York; export TZ; for s in \'2024-01-01 1 week ago\' \'2024-01-01 next friday 9am\' \'2024-02-29 +1 year\' \'2024-01-01 first monday\' \'2024-01-01 third day\' \'2024-01-01 -2 days ago\' \'2024-01-01 next month\' \'2024-01-01 12:00:00.5\' \'Mon, 01 Jan 2024 10:00:00 +0000\' \'2024-01-01 fortnight\' \'2024-01-01 10am tomorrow\' \'sunday 2024-01-01\' \'2024-1-1\' \'24-01-01\' \'Jan 2024\' \'2024-01-01 UTC+2\' \'TZ="America/New_York" 2024-01-01 10:00\' \'2024-01-01 10\' \'2024-01-01 24:00\' \'2024-02-30\'; do printf \'%s => \' "$s"; date -d "$s" \'+%F %T.%N %z %a\' 2>&1; done', F),
    Case("date_strings_3", 'for s in \'2024-01-01 3:4:5\' \'2024-01-01 12am\' \'2024-01-01 12pm\' \'2024-01-01 13pm\' \'1/2/24\' \'2024/01/02\' \'5-Jan-2024\' \'Jan-5-2024\' \'2024-01-01 +1 day +2 hours\' \'2024-01-01 1 day 2 hours ago\' \'2024-01-01 + 1 day\' \'2024-01-01 next day\' \'2024-01-01 last year\' \'2024-01-01 ago\' \'2024-01-01 10:00:00 -08:00\' \'2024-01-01 10:00 PST\' \'2024-01-01 1.5 days\' \'2024-01-01 thurs\' \'sept 3 2024\' \'2024-01-01 (comment) 10:00\'; do printf \'%s => \' "$s"; date -d "$s" \'+%F %T.%N %z %a\' 2>&1; done', F),
    Case("date_strings_3_new_york", 'TZ=America/New_York; export TZ; for s in \'2024-01-01 3:4:5\' \'2024-01-01 12am\' \'2024-01-01 12pm\' \'2024-01-01 13pm\' \'1/2/24\' \'2024/01/02\' \'5-Jan-2024\' \'Jan-5-2024\' \'2024-01-01 +1 day +2 hours\' \'2024-01-01 1 day 2 hours ago\' \'2024-01-01 + 1 day\' \'2024-01-01 next day\' \'2024-01-01 last year\' \'2024-01-01 ago\' \'2024-01-01 10:00:00 -08:00\' \'2024-01-01 10:00 PST\' \'2024-01-01 1.5 days\' \'2024-01-01 thurs\' \'sept 3 2024\' \'2024-01-01 (comment) 10:00\'; do printf \'%s => \' "$s"; date -d "$s" \'+%F %T.%N %z %a\' 2>&1; done', F),
    Case("date_strings_4", 'for s in \'2024-01-01T10:00\' \'2024-01-01t10:00\' \'2024-01-01 10:00:60\' \'2024-01-01 10:61\' \'2024-13-01\' \'99-01-01\' \'68-01-01\' \'2024-01-01 10:00 +25\' \'2024-01-01 10:00 +5\' \'2024-01-01 10:00 +530\' \'2024-01-01 10.30\' \'2024-01-01Z\' \'@1.5\' \'@-1\' \'@-1.5\' \'2024-01-01 UTC -2 hours\' \'2024-03-10 01:30 +1 day\' \'2024-01-01 12:00 CEST\' \'Sat Jan  6 10:00:00 UTC 2024\' \'2024-01-01 00:00:00 +1 month -1 day\'; do printf \'%s => \' "$s"; date -d "$s" \'+%F %T.%N %z %a\' 2>&1; done', F),
    Case("date_strings_4_new_york", 'TZ=America/New_York; export TZ; for s in \'2024-01-01T10:00\' \'2024-01-01t10:00\' \'2024-01-01 10:00:60\' \'2024-01-01 10:61\' \'2024-13-01\' \'99-01-01\' \'68-01-01\' \'2024-01-01 10:00 +25\' \'2024-01-01 10:00 +5\' \'2024-01-01 10:00 +530\' \'2024-01-01 10.30\' \'2024-01-01Z\' \'@1.5\' \'@-1\' \'@-1.5\' \'2024-01-01 UTC -2 hours\' \'2024-03-10 01:30 +1 day\' \'2024-01-01 12:00 CEST\' \'Sat Jan  6 10:00:00 UTC 2024\' \'2024-01-01 00:00:00 +1 month -1 day\'; do printf \'%s => \' "$s"; date -d "$s" \'+%F %T.%N %z %a\' 2>&1; done', F),
    Case("date_strings_5", 'for s in \'2023-12-31 23:59:59 +1 second\' \'2024-06-15 last week\' \'2024-06-15 this week\' \'2024-06-15 2 weeks ago\' \'2024-06-15 6 months ago\' \'2024-06-15 next year\' \'2024-01-01 00:00 UTC +3 hours\' \'1 Jan\'; do printf \'%s => \' "$s"; date -d "$s" \'+%F %T.%N %z %a\' 2>&1; done', F),
    Case("date_strings_5_new_york", 'TZ=America/New_York; export TZ; for s in \'2023-12-31 23:59:59 +1 second\' \'2024-06-15 last week\' \'2024-06-15 this week\' \'2024-06-15 2 weeks ago\' \'2024-06-15 6 months ago\' \'2024-06-15 next year\' \'2024-01-01 00:00 UTC +3 hours\' \'1 Jan\'; do printf \'%s => \' "$s"; date -d "$s" \'+%F %T.%N %z %a\' 2>&1; done', F),
    Case("touch_date_strings", "touch -d '2024-01-31 +1 month' a; touch -d 'Jan 5, 2024 3pm' d; "
         "touch -d '@1700000000.25' old; date -r a '+%F %T'; date -r d '+%F %T'; date -r old +%s.%N; "
         "touch -d 'not a date' a; echo $?", F),
    Case("date_file", "printf '2024-01-01\\nbad\\n@0\\n2024-03-01 +1 day\\n' > dl; date -f dl +%F; echo $?; "
         "date -f dl -d 2024-01-01 +%F; echo $?; date -f nope; echo $?; printf '2024-01-05\\n' | date -f - +%F; "
         "date --file=dl -u +%s", F),
    Case("touch_stdout", "touch - > f; touch -d 2020-01-02 - > f; date -r f +%F; touch - | cat; ls; "
         "touch - >&-; echo $?", F),
]
# `date -d` relative to now: each line says ok when what GNU's date gives holds (its place
# against `date +%s` read before and after, its weekday, its time of day)
_AROUND = 'a=$(date +%s); b=$(date -d "$1" +%s); c=$(date +%s); '
DATE_NOW = [
    Case("date_now_relative", "t() { " + _AROUND + "[ $((a + $2)) -le $b ] && [ $b -le $((c + $2)) ] && echo ok $1; }; "
         "t '2 days ago' -172800; t tomorrow 86400; t yesterday -86400; t '1 hour ago' -3600; t now 0; "
         "t today 0; t '+1 week' 604800; t '90 minutes' 5400; t 'next day' 86400; t '3 seconds ago' -3", F),
    Case("date_now_weekdays", "w() { " + _AROUND + "[ $(date -d \"$1\" +%u%T) = $2 ] && [ $b -ge $((a - $3)) ] "
         "&& [ $b -le $((c + $4)) ] && echo ok $1; }; w monday 100:00:00 86400 518400; "
         "w 'next monday' 100:00:00 0 604800; w 'last friday' 500:00:00 691200 0; w sun 700:00:00 86400 518400; "
         "w 'this wednesday' 300:00:00 86400 518400; " + _AROUND.replace('"$1"', "''") + "[ $(date -d '' +%T) = "
         "00:00:00 ] && [ $b -le $c ] && [ $b -gt $((a - 86400)) ] && echo ok empty", F),
]
WHICH = [
    Case("which_missing", "which nosuchcmd; echo $?", F), Case("which_none", "which; echo $?", F),
    Case("which_script", "mkdir -p bin; printf '#!/bin/sh\\n' > bin/t; chmod +x bin/t; PATH=$PWD/bin:$PATH which t", F),
    Case("which_not_exec", "mkdir -p bin; touch bin/t; PATH=$PWD/bin:/usr/bin which t; echo $?", F),
    Case("which_path", "mkdir -p bin; touch bin/t; chmod +x bin/t; which bin/t ./bin/t; echo $?", F),
]


@pytest.mark.parametrize("case", ENV + IDENT + DATE + DATE_STRINGS + DATE_NOW + WHICH, ids=Case.id)
def test_system(case: Case) -> None:
    assert_same(case)


def test_uname_a_shows_the_appliance() -> None:
    r = run_k("unset HOSTNAME; uname -a; uname -snrvm; hostname; HOSTNAME=box.example; hostname; hostname -s")
    machine = platform.machine()
    assert r.stdout.decode().splitlines() == [
        f"Linux komputer 0.1.0-k #1 K shell {machine} GNU/Linux",
        f"Linux komputer 0.1.0-k #1 K shell {machine}", "komputer", "box.example", "box"]


def test_which_finds_tools() -> None:
    assert run_k("which ls jq; echo $?").stdout == b"/usr/bin/ls\n/usr/bin/jq\n0\n"


def test_help_lists_builtins_and_tools() -> None:
    out = run_k("help").stdout.decode()
    assert "Shell builtins:" in out and {"cd", "jq", "grep"} <= set(out.split())


def test_nproc_counts_cpus() -> None:
    assert run_k("nproc").stdout == f"{len(os.sched_getaffinity(0))}\n".encode()


def test_env_never_leaks() -> None:
    assert run_k("env -i A=1 env; echo ${A-unset}; env -u HOME printenv HOME; echo $HOME").stdout == \
        b"A=1\nunset\n/home/agent\n"
