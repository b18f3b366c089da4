"""jq (libjq through the `jq` binding) against Debian's jq 1.6: output format, options, messages
and exit statuses."""

from __future__ import annotations

import pytest
from differential import Case, Dir, File, assert_same, require_tools

DOC = '{"name":"k","n":3,"tags":["a","b"],"nested":{"z":1,"a":[1.5,1e300,0.0001]},"ok":true,"none":null}\n'
F = {"doc.json": DOC, "lines.json": '{"a":1}\n{"a":2}\n{"a":"x"}\n', "bad.json": '{"a":1}\n{"a":\n',
     "arr.json": "[3,1,2]\n", "d/": Dir(), "secret.json": File("{}\n", 0o200), "prog.jq": ".name\n",
     "text.txt": "one\ntwo\n", "uni.json": '"h\\u00e9\\u0001\\u007f\\ud83d\\ude00/"\n',
     "items.json": '{"count":3,"items":[{"id":1,"name":"a b","active":true,"score":995,"owner":{"region":"n"}},'
                   '{"id":2,"name":"c\\"d","active":false,"score":991,"owner":null},'
                   '{"id":3,"name":"e\\u00e9","active":true,"score":7.5,"owner":{"region":"s"}}]}\n',
     "big_ints.json": "[" + "999999999999999," * 12 + "1,3,5]\n"}

CASES = [
    Case("pretty", "jq . doc.json", F),
    Case("compact", "jq -c . doc.json", F),
    Case("field_stdin", "cat doc.json | jq .name", F),
    Case("raw_field", "cat doc.json | jq -r .name", F),
    Case("raw_nonstring", "jq -r .nested doc.json", F),
    Case("join", "jq -j '.tags[]' doc.json; echo", F),
    Case("sort_keys", "jq -S . doc.json", F),
    Case("sort_compact", "jq -S -c . doc.json", F),
    Case("tab", "jq --tab . doc.json", F),
    Case("indent_1", "jq --indent 1 . doc.json", F),
    Case("indent_0", "jq --indent 0 . doc.json", F),
    Case("indent_bad", "jq --indent 9 . doc.json; echo $?", F),
    Case("numbers", "jq -c -n '[1e15,1e16,1.5e16,1e17,1e-5,0.0001,3.0,-1,123456789012345678,1e1000,-1.5e300]'", F),
    Case("strings_escape", "jq . uni.json", F),
    Case("ascii_output", "jq -a . uni.json", F),
    Case("null_input", "jq -n '1+1'", F),
    Case("null_input_inputs", "jq -n -c '[inputs.a]' lines.json", F),
    Case("slurp", "jq -c -s . lines.json", F),
    Case("slurp_add", "jq -s 'map(.a) | length' lines.json", F),
    Case("many_inputs", "jq .a lines.json", F),
    Case("arg", "jq -n --arg x hi '$x'", F),
    Case("argjson", "jq -n -c --argjson v '{\"a\":[1]}' '$v.a'", F),
    Case("argjson_bad", "jq -n --argjson v '{' '$v'; echo $?", F),
    Case("arg_missing", "jq -n --arg x; echo $?", F),
    Case("slurpfile", "jq -n -c --slurpfile f lines.json '$f'", F),
    Case("rawfile", "jq -n --rawfile f text.txt '$f'", F),
    Case("exit_false", "jq -e .ok doc.json; echo $?; jq -e .none doc.json; echo $?", F),
    Case("exit_empty", "jq -e 'empty' doc.json; echo $?", F),
    Case("exit_value", "jq -e .n doc.json; echo $?", F),
    Case("runtime_error", "jq .a.b lines.json; echo $?", F),
    Case("runtime_error_iterate", "echo 1 | jq '.[]'; echo $?", F),
    Case("runtime_error_add", "jq -n '1 + \"a\"'; echo $?", F),
    Case("error_object", "jq -n 'error({\"a\":1})'; echo $?", F),
    Case("error_string", "echo 1 | jq 'error(\"boom\")'; echo $?", F),
    Case("compile_error", "jq '.a |||' doc.json; echo $?", F),
    Case("compile_undefined", "jq -n 'foo'; echo $?", F),
    Case("compile_undefined_var", "jq -n '.a | $x'; echo $?", F),
    Case("compile_end", "jq -n '.['; echo $?", F),
    Case("parse_error", "jq -c . bad.json; echo $?", F),
    Case("parse_error_stdin", "echo '{\"a\":1} xx' | jq -c .; echo $?", F),
    Case("missing_file", "jq . nope.json; echo $?", F),
    Case("missing_and_present", "jq -c . nope.json arr.json; echo $?", F),
    Case("permission", "jq . secret.json; echo $?", F, user=1000),
    Case("unknown_option", "jq -x .; echo $?", F),
    Case("unknown_long", "jq --frob .; echo $?", F),
    Case("clustered", "jq -rc .tags doc.json", F),
    Case("from_file", "jq -f prog.jq doc.json", F),
    Case("raw_input", "jq -R . text.txt", F),
    Case("raw_input_slurp", "jq -Rs . text.txt", F),
    Case("map_select", "jq -c 'map(select(. > 1))' arr.json", F),
    Case("keys_sort", "jq -c 'keys, (to_entries|map(.key))' doc.json", F),
    Case("string_interp", "jq -r '\"\\(.name)-\\(.n)\"' doc.json", F),
    Case("env_var", "X=shell jq -n -r 'env.X, $ENV.X'", F),
    Case("empty_input", "jq . < /dev/null; echo $?", F),
    Case("pipe_curl_style", "printf '{\"field\":\"v\",\"x\":[1,2]}' | jq -r .field", F),
    Case("object_construct", "jq -c '{name, first: .tags[0]}' doc.json", F),
    Case("tostring_tojson", "jq -r '.tags|tojson, (.n|tostring)' doc.json", F),
    Case("parse_error_after_runtime", "echo '1 xx' | jq .a; echo $?", F),
    Case("parse_error_inputs", "echo 'xx' | jq -n '[inputs]'; echo $?", F),
    # jq's common subset, which K runs in Python before libjq (kshell/tools/data/jqfast.py)
    Case("subset_select_add", "jq '[.items[] | select(.active) | .score] | add' items.json", F),
    Case("subset_interp", "jq -r '.items[] | select(.score > 990) | \"\\(.id) \\(.name) \\(.owner.region)\"' items.json", F),
    Case("subset_compare", "jq -c '[.items[] | .score >= 991, .name < \"c\", .owner == null]' items.json", F),
    Case("subset_many", "jq -c '.a, .[-1]' lines.json arr.json; echo $?", F),
    Case("subset_error_midway", "jq -r '.items[] | \"\\(.owner.region)\" + .name' items.json; echo $?", F),
    Case("subset_sum_past_2_53", "jq 'add, (.[0] + .[1] - 1)' big_ints.json", F),
    Case("subset_flush_scalars", "echo '1 2 [3]\"x\"' | jq -c '.'; echo $?", F),
    Case("sort_by_group", "jq -c '[.[]] | sort, (map({v:.}) | group_by(.v) | length)' arr.json", F),
]


def test_peer_installed() -> None:
    require_tools("jq")


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_jq(case: Case) -> None:
    assert_same(case)
