"""The phone's ``sqlite3`` is confined by construction (docs/security.md, :mod:`vlui.served.confined_sql`): each
invocation runs in a worker process that can open no file, holds pragmas and functions to allow-lists, and has a
memory and a time budget of its own, so no SQL reaches the host or the server's memory. The defects of issue 34 are
driven through the real adb CLI, as an attacker on loopback would drive them; a property-based fuzz of the SQL entry
point holds the rest."""

from __future__ import annotations

import resource
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.served.test_security import shell
from vlui.served import confined_sql
from vlui.served.phone import ServedPhone, ServeLimits
from vlui.served.private_adb import PrivateAdb
from vlui.served.shell import Shell
from vlui.served.shell.sqlite import run_confined

STORAGE = 2 << 20
LIMITS = ServeLimits(storage_bytes=STORAGE, sql_timeout_s=0.5)
TEMP_BLOBS = ("CREATE TEMP TABLE t AS WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) "
              "SELECT zeroblob(1000000) FROM c LIMIT 400")  # 400 MB of temporary table, far past the budget


@pytest.fixture(scope="module")
def pa():
    with PrivateAdb("000", noise=False, limits=LIMITS) as pa:
        yield pa


def served_meanwhile(pa: PrivateAdb, stop: threading.Event, answers: list[tuple[str, float]]) -> None:
    """A well-behaved client: ``getprop`` again and again until ``stop``, each answer with its latency."""
    while not stop.is_set():
        start = time.monotonic()
        answers.append((shell(pa, "getprop ro.build.version.sdk"), time.monotonic() - start))


# ---------------------------------------------------------------------------------------------- the host's files
def test_attach_of_a_computed_path_opens_no_host_file(pa, tmp_path):
    """Issue 34: SQLite hands the authorizer no name when ATTACH's path is an expression; that was taken for
    ``:memory:``, and ``'/HOSTDIR/' || 'x.db'`` created the file on the host and read host databases."""
    secret = tmp_path / "secret.db"
    con = sqlite3.connect(secret)
    con.execute("CREATE TABLE s(v)")
    con.execute("INSERT INTO s VALUES ('host secret')")
    con.commit()
    con.close()
    before = sorted(tmp_path.iterdir())
    out = shell(pa, f"sqlite3 /data/local/tmp/a.db \"ATTACH '{tmp_path}/' || 'x.db' AS x; CREATE TABLE x.t(a)\"")
    assert out == f"Error: unable to open database: {tmp_path}/x.db\n"  # as a device says of a path it cannot open
    for sql in (f"ATTACH '{tmp_path}/' || 'secret.db' AS h; SELECT v FROM h.s;",
                f"ATTACH 'file:{tmp_path}/' || 'secret.db?mode=ro' AS h; SELECT v FROM h.s;",
                f"ATTACH (SELECT '{secret}') AS h; SELECT v FROM h.s;",
                f"CREATE TABLE t(a); VACUUM INTO '{tmp_path}/' || 'copy.db';"):
        out = shell(pa, f"sqlite3 /data/local/tmp/a.db \"{sql}\"")
        assert out.startswith("Error: unable to open database: ") and "host secret" not in out, sql
    assert sorted(tmp_path.iterdir()) == before
    # an in-memory database attached by a computed name touches no file, and works as on a device
    assert shell(pa, "sqlite3 /data/local/tmp/a.db \"ATTACH ':mem' || 'ory:' AS m; CREATE TABLE m.t(a); "
                     "INSERT INTO m.t VALUES (7); SELECT a FROM m.t;\"") == "7\n"


def test_the_worker_can_open_no_file_even_without_the_authorizer(tmp_path):
    """The structural guarantee under the allow-lists: once confined, the worker's process opens no file, so SQL
    that slipped past the authorizer would still find none."""
    probe = f"""
import os, sqlite3, sys
from vlui.served.confined_sql import _Worker
worker = _Worker({{"timeout_s": 1, "room": 1 << 20, "header": False, "separator": "|", "sql": []}}, b"")
worker.confine()
worker.con.set_authorizer(None)
for sql in ("ATTACH '{tmp_path}/a.db' AS a", "VACUUM INTO '{tmp_path}/b.db'", "ATTACH 'file:{tmp_path}/c.db' AS c"):
    try:
        worker.con.execute(sql)
        print("opened:", sql)
    except sqlite3.OperationalError as err:
        print(err)
try:
    open("{tmp_path}/d", "w")
    print("opened: d")
except OSError as err:
    print(err.strerror)
"""
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.stdout.splitlines() == [f"unable to open database: {tmp_path}/a.db",
                                       f"unable to open database: {tmp_path}/b.db",
                                       f"unable to open database: file:{tmp_path}/c.db",
                                       "Too many open files"], out.stderr
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------- the server's memory
def test_a_process_wide_heap_limit_cannot_be_set_and_the_phone_is_unaffected(pa):
    """Issue 34: ``PRAGMA hard_heap_limit`` acts on the whole process, and every later sqlite3 of every client (and
    ``am force-stop`` of the launcher, which rewrites its database) failed with a MemoryError traceback."""
    for pragma in ("hard_heap_limit=1000", "soft_heap_limit=1000", "threads=8", "writable_schema=1",
                   "temp.max_page_count=2147483647", "temp_store=FILE", "mmap_size=268435456",
                   "page_size=65536"):
        out = shell(pa, f"sqlite3 /data/local/tmp/h.db 'PRAGMA {pragma};'")
        assert out.startswith(f"Error: not authorized: PRAGMA {pragma.split('=')[0].split('.')[-1]} "), pragma
    # reading a limit is harmless, and shows the worker's own
    budget = confined_sql.memory_budget(pa.phone.files.room(replacing="/data/local/tmp/h.db"))
    assert shell(pa, "sqlite3 /data/local/tmp/h.db 'PRAGMA hard_heap_limit'") == f"{budget}\n"
    assert shell(pa, "sqlite3 /data/local/tmp/h.db 'SELECT 1'") == "1\n"
    out = pa.adb("-s", pa.serial, "shell", "am force-stop com.android.launcher3")
    assert (out.returncode, out.stdout + out.stderr) == (0, "")


def test_a_query_past_its_memory_budget_ends_in_out_of_memory_and_others_are_served(pa):
    """Issue 34: a temporary table of zeroblobs took 2.57 GB in one statement, and four at once gave MemoryError
    tracebacks. Each query now has its own budget (:func:`memory_budget`) in its own process."""
    stop, answers = threading.Event(), []
    other = threading.Thread(target=served_meanwhile, args=(pa, stop, answers))
    other.start()
    server_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10
    outs: list[subprocess.CompletedProcess] = []

    def attack() -> None:
        outs.append(pa.adb("-s", pa.serial, "shell", f"sqlite3 /data/local/tmp/m.db '{TEMP_BLOBS}'"))

    attackers = [threading.Thread(target=attack) for _ in range(4)]
    for thread in attackers:
        thread.start()
    for thread in attackers:
        thread.join()
    stop.set()
    other.join()
    assert [(o.returncode, o.stdout, o.stderr) for o in outs] == [(1, "", "Error: out of memory\n")] * 4
    assert answers and all(answer == "29\n" for answer, _ in answers)
    # the server (this process: the phone runs in threads here) never held the query's data
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10) - server_before < 100 << 20
    assert shell(pa, "sqlite3 /data/local/tmp/m.db 'SELECT 2'") == "2\n"


# ---------------------------------------------------------------------------------------------- fuzzing
def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def sql_inputs(host: Path) -> st.SearchStrategy[str]:
    """SQL a hostile client might send: statements that name host files or reach for process-wide settings, every
    pragma and function this SQLite has with odd arguments, big values, and plain noise, in any mix."""
    con = sqlite3.connect(":memory:")
    pragmas = sorted(r[0] for r in con.execute("SELECT name FROM pragma_pragma_list"))
    functions = sorted(r[0] for r in con.execute("SELECT name FROM pragma_function_list") if r[0].isidentifier())
    con.close()
    name = st.sampled_from(["x.db", "", ":memory:", "file:x.db?mode=rwc", "../x.db", "x.db-journal"])
    path = st.one_of(name.map(lambda n: f"{host}/{n}"), name)
    value = st.one_of(st.integers(-2**63, 2**63 - 1).map(str), st.sampled_from(["'a'", "NULL", "x'00'", "1e308",
                                                                                "ON", "OFF", "MEMORY", "FILE"]),
                      path.map(lambda p: f"'{p}'"))
    statement = st.one_of(
        path.map(lambda p: f"ATTACH '{p}' AS a"),
        path.map(lambda p: f"ATTACH '{p[:len(p) // 2]}' || '{p[len(p) // 2:]}' AS a"),
        path.map(lambda p: f"VACUUM INTO '{p}'"),
        st.just("CREATE TABLE IF NOT EXISTS a.t(x); INSERT INTO a.t VALUES (1)"),
        st.builds(lambda p, v: f"PRAGMA {p} = {v}", st.sampled_from(pragmas), value),
        st.builds(lambda p, v: f"SELECT * FROM pragma_{p}({v})", st.sampled_from(pragmas), value),
        st.builds(lambda f, a: f"SELECT {f}({', '.join(a)})", st.sampled_from(functions), st.lists(value, max_size=3)),
        st.integers(0, 1 << 31).map(lambda n: f"SELECT length(zeroblob({n})), length(randomblob({n % 100_000}))"),
        st.just(TEMP_BLOBS),
        st.just("CREATE TABLE IF NOT EXISTS t(a); INSERT INTO t VALUES (1); SELECT * FROM t"),
        st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=60),
    )
    return st.lists(statement, min_size=1, max_size=4).map("; ".join)


def test_any_sql_ends_in_output_or_one_error_line_and_touches_no_host_file(tmp_path, monkeypatch):
    watched = tmp_path / "host"
    watched.mkdir()
    monkeypatch.chdir(watched)
    for var in ("TMPDIR", "SQLITE_TMPDIR"):  # where SQLite would put temporary files
        monkeypatch.setenv(var, str(watched))
    phone = ServedPhone("000", noise=False, limits=LIMITS)
    stop, answers = threading.Event(), []

    def well_behaved() -> None:
        while not stop.is_set():
            out: list[bytes] = []
            start = time.monotonic()
            Shell(phone).run("getprop ro.build.version.sdk", out.append, threading.Event())
            answers.append((b"".join(out), time.monotonic() - start))
            time.sleep(0.05)

    other = threading.Thread(target=well_behaved)
    other.start()

    @settings(max_examples=60, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(sql_inputs(watched))
    def check(sql: str) -> None:
        out: list[bytes] = []
        err: list[bytes] = []
        status = Shell(phone).run(f"sqlite3 /data/local/tmp/f.db {_quoted(sql)}", out.append, threading.Event(),
                                  err.append)
        errors = b"".join(err).decode("utf-8", "replace")
        assert status in (0, 1), (status, errors)
        assert "Traceback" not in errors and b"Traceback" not in b"".join(out)
        assert errors == "" if status == 0 else (errors.startswith("Error: ") and errors.count("\n") == 1), errors
        assert list(watched.iterdir()) == []
        assert phone.files.used <= STORAGE

    try:
        check()
    finally:
        stop.set()
        other.join()
    assert answers and all(answer == b"29\n" for answer, _ in answers)
    assert max(latency for _, latency in answers) < 30  # served throughout (not stalled), on a loaded machine
    out: list[bytes] = []
    assert Shell(phone).run("sqlite3 /data/local/tmp/g.db 'SELECT 1'", out.append, threading.Event()) == 0
    assert out == [b"1\n"]


def test_a_worker_prints_list_mode_and_a_client_that_goes_away_ends_it():
    job = confined_sql.job(["SELECT 1, x'41', NULL, 2.0"], 1 << 20, 1.0, True, b"\xff", b"")
    out: list[bytes] = []
    errors: list[str] = []
    assert run_confined(job, 1.0, out.append, errors.append, lambda: False) == (0, None)
    assert (b"".join(out), errors) == (b"1\xffx'41'\xffNULL\xff2.0\n1\xffA\xff\xff2.0\n", [])
    # a client that goes away (Ctrl-C, a closed stream) ends its query at once, whatever the time limit
    forever = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    job = confined_sql.job([forever], 1 << 20, 60.0, False, b"|", b"")
    start = time.monotonic()
    status = run_confined(job, 60.0, out.append, errors.append, lambda: time.monotonic() - start > 0.3)
    assert status == (1, None) and errors == [] and time.monotonic() - start < 30  # not the 60 s limit
