"""The served phone is safe to expose to any client that reaches its port (docs/security.md): SQL sees only the
phone's own files, every resource a client can take is bounded, and the system partitions are read-only. Driven by
the real adb CLI through a private adb server, as an attacker on loopback would drive it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest

from tests.served.conftest import blob
from tests.served.test_fairness import wait_until
from vlui.errors import VluiError
from vlui.served.phone import ServedPhone, ServeLimits
from vlui.served.private_adb import PrivateAdb
from vlui.served.shell import Shell
from vlui.served.storage import PhoneFiles, StorageError, entry_cost

STORAGE = 2 << 20
LIMITS = ServeLimits(storage_bytes=STORAGE, sql_timeout_s=0.5)


@pytest.fixture(scope="module")
def pa():
    with PrivateAdb("000", noise=False, limits=LIMITS) as pa:
        yield pa


def shell(pa: PrivateAdb, command: str) -> str:
    out = pa.adb("-s", pa.serial, "shell", command)
    return out.stdout + out.stderr


@pytest.fixture
def host_dir(tmp_path: Path) -> Path:
    """A host directory an attacker names in SQL; nothing may appear in it."""
    return tmp_path


# ---------------------------------------------------------------------------------------------- SQL
def test_attach_and_vacuum_into_cannot_create_host_files(pa, host_dir):
    target = host_dir / "anything.db"
    out = shell(pa, f"sqlite3 /data/local/tmp/x.db \"ATTACH DATABASE '{target}' AS x; CREATE TABLE x.t(a);\"")
    assert out == f"Error: unable to open database: {target}\n"
    out = shell(pa, f"sqlite3 /data/local/tmp/x.db \"CREATE TABLE t(a); VACUUM INTO '{host_dir / 'copy.db'}';\"")
    assert out == f"Error: unable to open database: {host_dir / 'copy.db'}\n"
    assert list(host_dir.iterdir()) == []
    # what ran before the refusal is done on the phone's own file, as on a device in autocommit
    assert shell(pa, "sqlite3 /data/local/tmp/x.db .tables") == "t\n"


def test_attach_cannot_read_host_files(pa, host_dir):
    secret = host_dir / "secret.db"
    con = sqlite3.connect(secret)
    con.execute("CREATE TABLE s(v)")
    con.execute("INSERT INTO s VALUES ('host secret')")
    con.commit()
    con.close()
    for sql in (f"ATTACH '{secret}' AS h; SELECT v FROM h.s;", f"ATTACH 'file:{secret}?mode=ro' AS h;",
                f"SELECT load_extension('{secret}');"):
        out = shell(pa, f"sqlite3 /data/local/tmp/r.db \"{sql}\"")
        assert "host secret" not in out and out.startswith("Error: "), sql
    # DETACH finds nothing to detach; an in-memory ATTACH, which touches no file, works as on a device
    assert shell(pa, "sqlite3 /data/local/tmp/r.db 'DETACH h'") == "Error: no such database: h\n"
    assert shell(pa, "sqlite3 /data/local/tmp/r.db \"ATTACH ':memory:' AS m; CREATE TABLE m.t(a); "
                     "INSERT INTO m.t VALUES (7); SELECT a FROM m.t;\"") == "7\n"


def test_pragmas_and_functions_that_reach_the_host_are_denied(pa, host_dir):
    for sql, word in ((f"PRAGMA temp_store_directory = '{host_dir}'", "temp_store_directory"),
                      ("PRAGMA max_page_count = 2147483647", "max_page_count"),
                      ("SELECT fts3_tokenizer('simple')", "fts3_tokenizer")):
        out = shell(pa, f"sqlite3 /data/local/tmp/p.db \"{sql}\"")
        assert out.startswith("Error: not authorized") and word in out, sql
    assert list(host_dir.iterdir()) == []


FOREVER = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def test_a_query_that_runs_too_long_is_stopped(pa):
    out = pa.adb("-s", pa.serial, "shell", f"sqlite3 /data/local/tmp/q.db '{FOREVER}'")
    assert (out.returncode, out.stderr) == (1, "Error: interrupted: the simulated phone stops an SQL statement "
                                               "after 0.5 s\n")


def _sql_workers() -> list[int]:
    """This process's children that are SQL workers (the phone is served in this process)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):  # a process that ended meanwhile
            continue
        if ppid == os.getpid() and b"confined_sql" in cmdline:
            found.append(int(stat.parent.name))
    return found


def test_other_clients_are_served_while_a_query_runs_and_a_client_that_leaves_ends_its_query():
    with PrivateAdb("000", noise=False, limits=ServeLimits(storage_bytes=STORAGE, sql_timeout_s=600)) as slow:
        query = subprocess.Popen([slow.adb_path, "-P", str(slow.adb_port), "-s", slow.serial, "shell",
                                  f"sqlite3 /data/local/tmp/q.db '{FOREVER}'"], env=slow.env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert wait_until(_sql_workers), "the query's worker did not start"
            (worker,) = _sql_workers()
            for _ in range(3):  # answered while the query runs: the phone is not locked meanwhile
                assert shell(slow, "getprop ro.build.version.sdk") == "29\n"
                assert _sql_workers() == [worker] and query.poll() is None
        finally:
            query.kill()
            query.wait()
        assert wait_until(lambda: not _sql_workers()), "the worker did not end once its client left"


def test_a_database_cannot_outgrow_the_phones_storage(pa):
    out = shell(pa, "sqlite3 /data/local/tmp/big.db \"CREATE TABLE b(x); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL "
                    "SELECT i + 1 FROM c LIMIT 64) INSERT INTO b SELECT randomblob(65536) FROM c;\"")
    assert out == "Error: database or disk is full\n"
    assert pa.phone.files.used <= STORAGE
    shell(pa, "rm /data/local/tmp/big.db")


# ---------------------------------------------------------------------------------------------- storage
def test_pushes_past_the_storage_budget_fail_and_keep_what_was_there(pa, tmp_path):
    small, big = tmp_path / "small.bin", tmp_path / "big.bin"
    small.write_bytes(blob(100_000, 1))
    big.write_bytes(blob(STORAGE + 1, 2))
    assert pa.adb("-s", pa.serial, "push", str(small), "/sdcard/Download/f.bin").returncode == 0
    out = pa.adb("-s", pa.serial, "push", str(big), "/sdcard/Download/f.bin")
    assert out.returncode != 0 and "No space left on device" in out.stdout + out.stderr  # adb 29 says it on stdout
    assert pa.phone.files.get("/sdcard/Download/f.bin") == small.read_bytes()
    assert pa.phone.files.used <= STORAGE
    shell(pa, "rm /sdcard/Download/f.bin")


def test_a_command_writing_past_the_budget_stops_with_a_full_disk(pa):
    # a raw screenshot of this phone is 8 MiB, four times the budget
    for command in ("screencap /sdcard/s.raw", "screencap > /sdcard/s.raw"):
        out = pa.adb("-s", pa.serial, "shell", command)
        assert (out.returncode, out.stderr) == (1, "screencap: /sdcard/s.raw: No space left on device\n")
    assert pa.phone.files.used <= STORAGE
    shell(pa, "rm -f /sdcard/s.raw")


def test_system_is_read_only_as_on_a_user_build(pa, tmp_path):
    assert shell(pa, "echo x > /system/bin/evil") == "/system/bin/sh: can't create /system/bin/evil: Read-only file system\n"
    assert shell(pa, "touch /system/evil; mkdir /system/d; rm -r /system/bin; echo x > /evil") == (
        "touch: '/system/evil': Read-only file system\nmkdir: '/system/d': Read-only file system\n"
        "rm: /system/bin: Read-only file system\n/system/bin/sh: can't create /evil: Read-only file system\n")
    local = tmp_path / "f"
    local.write_bytes(b"x")
    out = pa.adb("-s", pa.serial, "push", str(local), "/system/bin/evil")
    assert out.returncode != 0 and "Read-only file system" in out.stdout + out.stderr
    assert not any(p.startswith("/system") or p.count("/") == 1 for p in pa.phone.files)
    # writable places stay writable
    assert shell(pa, "echo ok > /data/local/tmp/ok && cat /data/local/tmp/ok") == "ok\n"


def test_phone_files_budget_unit():
    entry = entry_cost("/sdcard/a")  # a file costs its content, its path and an inode's worth (ENTRY_BYTES)
    files = PhoneFiles(budget=2 * entry + 10, max_entries=10)
    files["/sdcard/a"] = b"12345"
    with pytest.raises(StorageError) as full:
        files["/sdcard/b"] = b"123456"
    assert full.value.strerror == "No space left on device" and "/sdcard/b" not in files
    files["/sdcard/a"] = b"1234567890"  # replacing a file frees its old bytes first
    assert files.used == entry + 10 and files.room() == entry
    del files["/sdcard/a"]
    assert files.used == 0
    with pytest.raises(StorageError, match="Read-only file system"):
        files["/system/x"] = b""


def test_saved_snapshots_share_a_bounded_store():
    phone = ServedPhone("000", noise=False, limits=ServeLimits(storage_bytes=1 << 20))
    booted = phone.files.used  # the launcher's database
    phone.files["/sdcard/a"] = blob(600_000, 1)
    phone.save_snapshot("one")
    phone.save_snapshot("two")  # the same bytes: counted once
    phone.files["/sdcard/a"] = blob(600_000, 2)
    with pytest.raises(VluiError, match="not enough space to save snapshot 'three'"):
        phone.save_snapshot("three")
    phone.delete_snapshot("one")
    phone.delete_snapshot("two")
    phone.save_snapshot("three")
    phone.load_snapshot("three")
    assert phone.files.used == booted + 600_000 + entry_cost("/sdcard/a") and phone.files.budget == 1 << 20


@pytest.mark.parametrize("field, value", [("storage_bytes", -1), ("sql_timeout_s", 0), ("max_connections", 0),
                                          ("idle_timeout_s", float("nan")), ("max_streams", 1.5)])
def test_serve_limits_are_checked(field, value):
    with pytest.raises(VluiError, match=field):
        ServeLimits(**{field: value})


def test_what_a_client_writes_elsewhere_is_bounded_too():
    """The log, system properties and settings: each bounded as on a device, so no loop of writes grows the host's
    memory without end."""
    phone = ServedPhone("000", noise=False)

    def run(command: str) -> tuple[int, str]:
        out: list[bytes] = []
        status = Shell(phone).run(command, out.append, threading.Event())
        return status, b"".join(out).decode()

    run(f"log -t Big {'x' * 100_000}")
    entry = phone.device.log.entries()[-1]
    assert (entry.tag, len(entry.message)) == ("Big", 4068 - 3 - 3)  # liblog's payload: prio, tag, NULs, message
    assert run(f"setprop debug.long {'v' * 92}")[0] == 1 and run(f"setprop debug.ok {'v' * 91}")[0] == 0
    for i in range(1, 1024):
        assert run(f"setprop debug.p{i} 1")[0] == 0
    status, out = run("setprop debug.one_too_many 1")
    assert status == 1 and "failed to set property" in out
    assert run("setprop debug.p1 2")[0] == 0  # changing a property takes no room
    status, out = run(f"settings put system a {'v' * 19_000}; settings put system b {'v' * 2_000}")
    assert status == 1 and "You are adding too many system settings" in out
    assert phone.settings["system"].get("b") is None and len(phone.settings["system"]["a"]) == 19_000
