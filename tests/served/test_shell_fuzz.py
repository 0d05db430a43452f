"""Property-based fuzzing of the simulated phone's shell: whatever a client sends, as a command line or as a script
on standard input, ends in output or one clean error line, never a traceback, in time linear in what was sent."""

from __future__ import annotations

import re
import threading
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vlui.served.phone import ServedPhone
from vlui.served.shell import Shell
from vlui.served.shell.language import Parser, ShellSyntaxError

# Pieces of the language (and of its bounds), glued at random: most scripts are wrong, some run, a few loop.
_PIECES = ["echo", "x", "$x", "${x}", "$?", "$#", "$1", '"$@"', "$((", "))", "$((1+x))", "$((1/0))", "x=1", "i=$((i+1))",
           "for", "in", "do", "done", "while", "until", "if", "then", "elif", "else", "fi", "case", "esac", ")", "(",
           ";;", "{", "}", "f()", "function", "return", "break", "continue", ":", "true", "false", "!", "[", "]",
           "test", "-d", "-eq", "-lt", "read", "cat", "grep", "a", "head", "-n", "1", "wc", "sort", "sh", "-c", "|",
           "||", "&&", ";", "&", "\n", "<", ">", ">>", "2>&1", "</dev/null", ">/data/local/tmp/f", "/data/local/tmp/f",
           "'", '"', "\\", "`", "$(", "#", "*", "?", "[a-z]", " ", "\t", "<<", "<&", "<>", "${", "exit", "export",
           "unset", "-f", "IFS=:", "cd", "/sdcard", "pwd", "ls", "é", "\x00", "\r",
           "99999999999999999999", "9" * 5000, "tail", "exit", "$((x+9999999999999999999999))", "[", "-eq"]

_SH = "/system/bin/sh: "
# What a command may take, wall clock: it ends at its CPU budget (0.2 s) or when its client leaves (2 s); the bound is
# a guard against a command that does neither, with room for a loaded machine.
_GUARD_S = 30.0
_PYTHON_ERROR = re.compile(r"Traceback|(Recursion|Memory|Type|Value|Key|Index|Attribute|Name|Unicode\w*)Error")


def _phone() -> ServedPhone:
    return ServedPhone("000", noise=False)


_PHONE = _phone()


def _run(command: str) -> tuple[str, int, float]:
    """``command`` run with a small CPU budget and a client that leaves after 2 s (a ``sleep`` ends there)."""
    out: list[bytes] = []
    cancelled = threading.Event()
    timer = threading.Timer(2.0, cancelled.set)
    timer.start()
    start = time.perf_counter()
    try:
        status = Shell(_PHONE, cpu_budget_s=0.2).run(command, out.append, cancelled)
    finally:
        timer.cancel()
    return b"".join(out).decode("utf-8", "replace"), status, time.perf_counter() - start


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map(" ".join))
def test_any_command_line_ends_in_output_or_one_clean_error(command: str) -> None:
    out, status, seconds = _run(command)
    assert isinstance(status, int) and 0 <= status <= 255
    assert not _PYTHON_ERROR.search(out)
    assert seconds < _GUARD_S
    try:
        Parser(command).parse()
    except ShellSyntaxError as err:  # what does not parse runs nothing and says so in one line
        assert (out, status) == (f"{_SH}{err}\n", 2)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_any_text_is_run_or_refused_cleanly(command: str) -> None:
    out, status, seconds = _run(command)
    assert isinstance(status, int) and not _PYTHON_ERROR.search(out) and seconds < _GUARD_S


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES) | st.binary(max_size=8).map(lambda b: b.decode("latin-1")), max_size=30),
       st.lists(st.integers(1, 16), min_size=1, max_size=8))
def test_any_script_on_standard_input_runs_cleanly_however_it_is_cut(pieces: list[str], cuts: list[int]) -> None:
    data = " ".join(pieces).encode("utf-8", "surrogateescape")
    chunks, i = [], 0
    while i < len(data):  # the same bytes, cut into packets anywhere
        size = cuts[len(chunks) % len(cuts)]
        chunks.append(data[i:i + size])
        i += size
    feed = iter(chunks)
    out: list[bytes] = []
    status = Shell(_PHONE, cpu_budget_s=0.2).run_script(lambda: next(feed, b""), out.append, threading.Event())
    text = b"".join(out).decode("utf-8", "replace")
    assert isinstance(status, int) and 0 <= status <= 255 and not _PYTHON_ERROR.search(text)


_TOOLS = ["printf", "cut", "sed", "find", "stat", "ps", "pidof", "kill", "uname", "su", "run-as", "toybox", "ln"]
_TOOL_ARGS = ["-o", "pid,name", "-p", "1", "-A", "%d", "%s%b%c", "%*.*f", "-d:", "-f", "1-", "-c", "s/a/b/g", "-n",
              "$p", "/x/,3d", "-E", "s/(a)/\\1\\2/", "-name", "*", "-type", "d", "-maxdepth", "/sdcard/", "/proc",
              "-c", "%n %s %F", "-L", "0", "-9", "-s", "-T", "-t", "-l", "com.android.chrome", "9" * 40, "\\", "/"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_TOOLS), st.lists(st.sampled_from(_TOOL_ARGS) | st.text(max_size=10), max_size=6),
       st.text(max_size=40))
def test_the_toolbox_commands_end_in_output_or_clean_lines(name: str, args: list[str], stdin: str) -> None:
    """ps, kill, printf, cut, sed, find, stat, su, ... with any arguments and input: output or clean lines, never
    a Python error, within the guard (issue 63's commands)."""
    quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in args)
    feed = "'" + stdin.replace("'", "'\\''") + "'"
    out, status, seconds = _run(f"echo {feed} | {name} {quoted}")
    assert isinstance(status, int) and 0 <= status <= 255
    assert not _PYTHON_ERROR.search(out), out
    assert seconds < _GUARD_S
