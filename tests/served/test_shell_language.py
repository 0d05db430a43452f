"""The simulated phone's shell as a language: mksh's compound commands, functions, arithmetic and ``<``, with the
bounds that keep one client's script from holding the server (line and argument lengths, nesting, CPU time)."""

from __future__ import annotations

import re
import threading
import time

import pytest

from vlui.served.phone import ServedPhone
from vlui.served.shell import Shell
from vlui.served.shell.context import ARG_MAX, MAX_ARG_STRLEN, MAX_DEPTH
from vlui.served.shell.language import Parser

# A bound on wall-clock time is a guard against work that grows as the square of the input (minutes here), never a
# measure of speed: the suite runs on loaded machines, two tests at a time, where seconds of normal work may take
# several times as long.
GUARD_S = 30.0


@pytest.fixture(scope="module")
def phone() -> ServedPhone:
    return ServedPhone("000", noise=False)


def sh(phone: ServedPhone, command: str, shell: Shell | None = None, cancelled: threading.Event | None = None
       ) -> tuple[str, int]:
    out: list[bytes] = []
    status = (shell or Shell(phone)).run(command, out.append, cancelled or threading.Event())
    return b"".join(out).decode("utf-8", "replace"), status


def script(phone: ServedPhone, chunks: list[bytes], shell: Shell | None = None) -> tuple[str, int]:
    """``chunks`` sent to ``sh`` on its standard input (``echo ... | adb shell``)."""
    out: list[bytes] = []
    feed = iter(chunks)
    status = (shell or Shell(phone)).run_script(lambda: next(feed, b""), out.append, threading.Event())
    return b"".join(out).decode("utf-8", "replace"), status


# ---------------------------------------------------------------------------------------------- compound commands
def test_loops_conditionals_and_case_run_as_in_mksh(phone) -> None:
    assert sh(phone, "for i in 1 2 3; do echo $i; done") == ("1\n2\n3\n", 0)
    assert sh(phone, "i=0; while [ $i -lt 3 ]; do echo -n $i; i=$((i + 1)); done; echo") == ("012\n", 0)
    assert sh(phone, "n=3; until [ $n = 0 ]; do n=$((n-1)); done; echo $n") == ("0\n", 0)
    assert sh(phone, "if false; then echo a; elif [ -d /sdcard ]; then echo b; else echo c; fi") == ("b\n", 0)
    assert sh(phone, "if false; then echo a; fi; echo $?") == ("0\n", 0)
    assert sh(phone, "for f in a.apk b.txt 'c d'; do case $f in *.apk) echo apk;; *.txt|*.log) echo text;; "
                     "*) echo \"other $f\";; esac; done") == ("apk\ntext\nother c d\n", 0)
    assert sh(phone, "case x in (y) echo no;; esac; echo $?") == ("0\n", 0)
    assert sh(phone, "for i in 1 2 3 4 5; do [ $i = 2 ] && continue; [ $i = 4 ] && break; echo $i; done") == (
        "1\n3\n", 0)
    assert sh(phone, "for i in a b; do for j in 1 2; do [ $j = 2 ] && continue 2; echo $i$j; done; done") == (
        "a1\nb1\n", 0)
    assert sh(phone, "{ echo a; echo b; } | grep -c .") == ("2\n", 0)
    assert sh(phone, "for i in 1 2 3; do echo $i; done | tail -n 1") == ("3\n", 0)
    assert sh(phone, "! false && ! true; echo $?") == ("1\n", 0)
    assert sh(phone, "x='a b  c'; for w in $x; do echo \"[$w]\"; done; for w in \"$x\"; do echo \"[$w]\"; done") == (
        "[a]\n[b]\n[c]\n[a b  c]\n", 0)
    multi_line = "for p in /sdcard /data\ndo\n  test -d $p &&\n    echo $p\ndone\n"
    assert sh(phone, multi_line) == ("/sdcard\n/data\n", 0)


def test_functions_take_arguments_and_return(phone) -> None:
    assert sh(phone, "f() { echo \"$# $1 $2\"; return 3; }; f a 'b c'; echo $?") == ("2 a b c\n3\n", 0)
    assert sh(phone, "function g { for a in \"$@\"; do echo \"<$a>\"; done; }; g 1 '2 3'") == ("<1>\n<2 3>\n", 0)
    assert sh(phone, "f() { echo in; }; unset -f f; f") == ("/system/bin/sh: f: not found\n", 127)
    assert sh(phone, "sh -c 'echo $0 $1 $#' name one") == ("name one 1\n", 0)
    assert sh(phone, "x=out; f() { local x=in; echo $x; }; f; echo $x") == ("in\nout\n", 0)
    assert sh(phone, "set -- a b; echo $# $2; set -e") == (
        "2 b\n/system/bin/sh: set: -e: not supported by the simulated phone's shell\n", 1)
    assert sh(phone, "echo a:b | { IFS=: read x y; echo $y $x; }") == ("b a\n", 0)
    shell = Shell(phone)  # an interactive session keeps its functions from line to line
    assert sh(phone, "greet() { echo hi $1; }", shell) == ("", 0)
    assert sh(phone, "greet you", shell) == ("hi you\n", 0)


def test_arithmetic_is_mksh_s_32_bit_integers(phone) -> None:
    assert sh(phone, "echo $((1 + 2 * 3)) $(( (1+2)*3 )) $((7 / 2)) $((-7 % 3)) $((2 > 1 && 0 || 5))") == (
        "7 9 3 -1 1\n", 0)
    assert sh(phone, "echo $((2147483647 + 1)) $((1 << 31)) $((0x10)) $((16#ff)) $((010)) $((~0))") == (
        "-2147483648 -2147483648 16 255 10 -1\n", 0)
    assert sh(phone, "x=5; y=x; echo $((x * 2)) $(($x + y)) $((z + 1)) $((x += 2)) $x $((x++)) $x $((x > 1 ? 10 : 20))") == (
        "10 10 1 7 7 7 8 10\n", 0)
    assert sh(phone, "echo $((1 / 0)); echo never") == ("/system/bin/sh: 1 / 0: zero divisor\n", 1)
    assert sh(phone, "echo $((1 +))") == ("/system/bin/sh: 1 +: unexpected 'end of expression'\n", 1)
    assert sh(phone, "echo $((3a))") == ("/system/bin/sh: 3a: bad number '3a'\n", 1)
    assert sh(phone, "x=x; echo $((x))") == ("/system/bin/sh: x: expression recurses on parameter 'x'\n", 1)


def test_input_redirection_reads_the_phone_s_files(phone) -> None:
    phone.files["/data/local/tmp/in.txt"] = b"one\ntwo words\nthree\n"
    assert sh(phone, "rm -f /data/local/tmp/gone.apk </dev/null; echo $?") == ("0\n", 0)  # adb install's cleanup
    assert sh(phone, "grep t < /data/local/tmp/in.txt; wc -l </data/local/tmp/in.txt") == ("two words\nthree\n3\n", 0)
    assert sh(phone, "while read a b; do echo \"[$a|$b]\"; done < /data/local/tmp/in.txt") == (
        "[one|]\n[two|words]\n[three|]\n", 0)
    assert sh(phone, "cat < /data/local/tmp/nope; echo $?") == (
        "/system/bin/sh: can't open /data/local/tmp/nope: No such file or directory\n1\n", 0)
    assert sh(phone, "echo 'echo from stdin $((6*7))' | sh") == ("from stdin 42\n", 0)
    assert sh(phone, "echo a b | { read x y; echo $y$x; }") == ("ba\n", 0)


def test_syntax_errors_are_mksh_s(phone) -> None:
    assert sh(phone, "if true; then echo a") == ("/system/bin/sh: syntax error: 'if' unmatched\n", 2)
    assert sh(phone, "for i in 1; do echo") == ("/system/bin/sh: syntax error: 'for' unmatched\n", 2)
    assert sh(phone, "{ echo a") == ("/system/bin/sh: syntax error: '{' unmatched\n", 2)
    assert sh(phone, "echo a; fi") == ("/system/bin/sh: syntax error: 'fi' unexpected\n", 2)
    assert sh(phone, "while true; done") == ("/system/bin/sh: syntax error: 'done' unexpected\n", 2)
    assert sh(phone, "if then fi") == ("/system/bin/sh: syntax error: 'then' unexpected\n", 2)
    assert sh(phone, "case a in a) echo;; b echo; esac")[1] == 2
    assert sh(phone, "echo ${a") == ("/system/bin/sh: syntax error: unexpected EOF\n", 2)
    for construct in ("echo $(id)", "echo `id`", "sleep 1 &", "(echo a)", "cat <<EOF"):
        out, status = sh(phone, construct)
        assert status == 2 and out.count("\n") == 1 and "not supported" in out, construct


# ---------------------------------------------------------------------------------------------- bounds
def test_a_pipeline_of_any_length_runs_without_recursion(phone) -> None:
    """``echo x`` followed by 1,000 ``| cat`` was a RecursionError on the server, exit 255 with nothing said."""
    assert sh(phone, "echo x" + " | cat" * 1000) == ("x\n", 0)
    assert sh(phone, "echo x" + " | cat" * 5000 + " | wc -l") == ("1\n", 0)
    assert sh(phone, "{ echo a; echo b; echo c; }" + " | cat" * 300 + " | head -n 1") == ("a\n", 0)


def test_parsing_is_linear_in_the_line(phone) -> None:
    """``adb shell echo <400 KB>`` took 0.9 s, growing as the square of the length: a word was rebuilt for each
    character added to it. At 4 MB that is minutes (100 times 0.9 s); parsed in linear time, a fraction of a
    second."""
    for text in ("a" * 4_000_000, "'" + "b" * 4_000_000 + "'", '"' + "c" * 4_000_000 + '"'):
        start = time.perf_counter()
        Parser("echo " + text).parse()
        assert time.perf_counter() - start < GUARD_S
    start = time.perf_counter()
    assert sh(phone, "echo " + "a" * (MAX_ARG_STRLEN - 6)) == ("a" * (MAX_ARG_STRLEN - 6) + "\n", 0)
    assert time.perf_counter() - start < GUARD_S


def test_a_command_line_is_bounded_as_an_argument_of_sh_c(phone) -> None:
    """adbd runs ``sh -c CMD``: the kernel refuses an argument of MAX_ARG_STRLEN bytes or more, and adbd says so."""
    assert sh(phone, "echo " + "a" * MAX_ARG_STRLEN) == (
        "error: exec '/system/bin/sh' failed: Argument list too long\n", 126)
    # what a loop makes out of a short line is bounded by ARG_MAX (the variables, and one command's arguments)
    out, status = sh(phone, "x=aaaaaaaa; while :; do x=$x$x; done")
    assert (out, status) == ("/system/bin/sh: x: Argument list too long\n", 1)
    out, status = sh(phone, "x=aaaaaaaa; while [ ${#} = 0 ]; do x=$x$x; echo $x $x $x $x >/dev/null; done")
    assert status in (1, 126) and out.endswith("Argument list too long\n") and out.count("\n") == 1
    out, status = sh(phone, "i=0; while [ $i -lt 100000 ]; do export v$i=" + "y" * 1000 + "; i=$((i+1)); done")
    assert re.fullmatch(r"/system/bin/sh: v\d+: Argument list too long\n", out) and status == 1
    assert ARG_MAX // 1010 - 20 < int(out.split(":")[1].strip()[1:]) <= ARG_MAX // 1005  # "vN=" and 1,000 bytes


def test_loops_stop_at_the_cpu_budget_or_when_the_client_leaves(phone) -> None:
    shell = Shell(phone, cpu_budget_s=0.3)
    start = time.monotonic()
    out, status = sh(phone, "while true; do :; done; echo never", shell)
    assert (out, status) == ("/system/bin/sh: CPU time limit exceeded: a command line may take 0.3 s of the "
                             "simulated phone's CPU\n", 152)
    assert time.monotonic() - start < GUARD_S
    assert sh(phone, "echo next", shell) == ("next\n", 0)  # the session goes on
    assert sh(phone, "f() { f; }; f") == (f"/system/bin/sh: f: nested too deeply (at most {MAX_DEPTH} levels)\n", 1)
    cancelled = threading.Event()
    threading.Timer(0.2, cancelled.set).start()
    start = time.monotonic()
    assert sh(phone, "while true; do sleep 1; done", cancelled=cancelled)[0] == ""  # sleeping costs no CPU
    assert time.monotonic() - start < GUARD_S  # the CPU budget (10 s of CPU) would never end it


def test_nesting_is_bounded_with_one_clean_error(phone) -> None:
    out, status = sh(phone, "{ " * 5000 + "echo deep" + "; }" * 5000)
    assert status == 2 and out.startswith("/system/bin/sh: syntax error: ") and out.count("\n") == 1
    out, status = sh(phone, "echo $((" + "(" * 5000 + "1" + ")" * 5000 + "))")
    assert status == 1 and out.startswith("/system/bin/sh: ") and out.count("\n") == 1
    out, status = sh(phone, "echo $((" + "x=" * 5000 + "1))")
    assert status == 1 and out.count("\n") == 1
    out, status = sh(phone, "[ " + "( " * 5000 + "a" + " )" * 5000 + " ]")
    assert status == 2 and out.count("\n") == 1
    assert sh(phone, "echo " + "! " * 5000 + "a") == ("! " * 4999 + "! a\n", 0)


# ---------------------------------------------------------------------------------------------- reading a script
def test_a_script_read_from_a_pipe_runs_as_sh_reads_it(phone) -> None:
    assert script(phone, [b"echo one\nfor i in 1 2\n", b"do\n echo $i\ndone\n", b"echo 'two\nlines'\necho end"]) == (
        "one\n1\n2\ntwo\nlines\nend\n", 0)
    assert script(phone, [b"echo a; exit 3\necho never\n"]) == ("a\n", 3)
    assert script(phone, [b"if true; then\n echo open\n"]) == ("/system/bin/sh: syntax error: 'if' unmatched\n", 2)
    shell = Shell(phone)
    out: list[bytes] = []
    shell.feed(b"while false\n", out.append, threading.Event())
    assert shell.waiting and not out  # a terminal shows its "> " prompt here
    shell.feed(b"do :; done; echo ok\n", out.append, threading.Event())
    assert not shell.waiting and out == [b"ok\n"]


def test_a_line_without_end_is_bounded_and_read_in_linear_time(phone) -> None:
    """``head -c 150M /dev/zero | tr '\\0' a | adb shell`` kept the whole line, joined again at every packet: a
    core busy for minutes after the client had gone."""
    chunk = b"a" * (1 << 20)
    start = time.perf_counter()
    out, status = script(phone, [chunk] * 150 + [b"\necho after\n"])
    assert time.perf_counter() - start < 2 * GUARD_S
    assert (out, status) == (f"/system/bin/sh: line too long: at most {MAX_ARG_STRLEN - 1} bytes\nafter\n", 0)
    # a command spanning many lines is parsed a bounded number of times (about a second; parsed again at every line,
    # the 10,000 lines would be parsed 50 million times: many minutes)
    start = time.perf_counter()
    out, status = script(phone, [b"{\n"] + [b": x\n"] * 10000 + [b"echo closed; }\n"])
    assert (out, status) == ("closed\n", 0) and time.perf_counter() - start < 2 * GUARD_S
