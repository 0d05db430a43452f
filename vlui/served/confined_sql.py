"""The phone's ``sqlite3``, confined to the phone: SQL that a client sends runs on an in-memory copy of a database
file of :attr:`ServedPhone.files` and can reach nothing else.

The SQLite library is the host's, so everything in SQL that names a file would name a host file. That is denied
by an authorizer, before the statement runs:

- ``ATTACH`` of anything but ``:memory:`` and ``VACUUM INTO`` a file fail as a device's sqlite3 fails on a file
  it cannot open (``unable to open database: PATH``); ``DETACH`` then finds nothing to detach;
- ``load_extension`` (off in Python anyway) and ``fts3_tokenizer`` (which trusts pointers given in SQL) are denied;
- pragmas that point SQLite at a host directory (``temp_store_directory``, ``data_store_directory``) or lift the
  limits below (``max_page_count``, ``temp_store``) are denied.

And bounded, so that one client cannot starve the phone or the host: a statement stops after ``timeout_s`` (a
progress handler), the database may grow only into the room the phone's storage has left (``max_page_count``:
``database or disk is full``), no value may be larger than that room, and temporary tables stay in memory.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from vlui.served.device_files import db_bytes, open_db

MAX_VALUE = 64 << 20  # the largest string or blob a statement may make, whatever the room
DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit", "fsdir"})
DENIED_PRAGMAS = frozenset({"temp_store_directory", "data_store_directory", "max_page_count", "temp_store",
                            "mmap_size"})
IN_MEMORY = ("", ":memory:")
PROGRESS_EVERY = 10_000  # SQLite VM instructions between two looks at the clock


class SqlTimeout(sqlite3.OperationalError):
    pass


class ConfinedDb:
    """One ``sqlite3`` invocation's database: ``data`` (the file's bytes, or empty for a new file) in memory.

    :meth:`execute` runs one statement; :meth:`data` is the file's content afterwards."""

    def __init__(self, data: bytes, room: int, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._denied: tuple[str, str] | None = None
        self._deadline = 0.0
        self.con = open_db(data) if data else sqlite3.connect(":memory:")
        self.con.isolation_level = None  # autocommit, as the sqlite3 tool
        page_size = self.con.execute("PRAGMA page_size").fetchone()[0]
        self.con.execute(f"PRAGMA max_page_count = {max(1, room // page_size)}")
        self.con.execute("PRAGMA temp_store = MEMORY")
        if hasattr(self.con, "setlimit"):  # Python 3.11+; the authorizer denies file ATTACHes on any version
            self.con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max(1, min(MAX_VALUE, room)))
            self.con.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 2)
        self.con.set_authorizer(self._authorize)
        self.con.set_progress_handler(self._progress, PROGRESS_EVERY)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> ConfinedDb:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _authorize(self, action: int, arg1: str | None, arg2: str | None, *_) -> int:
        if action == sqlite3.SQLITE_ATTACH and (arg1 or "") not in IN_MEMORY:
            self._denied = ("attach", arg1 or "")
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in DENIED_FUNCTIONS:
            self._denied = ("function", arg2 or "")
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in DENIED_PRAGMAS and arg2 is not None:
            self._denied = ("pragma", arg1 or "")
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    def _progress(self) -> int:
        return 1 if time.monotonic() > self._deadline else 0

    def execute(self, statement: str, parameters: Sequence[Any] = ()) -> sqlite3.Cursor:
        """Run one statement with its ``?`` parameters (its rows are read with the cursor; reading them counts
        against the time limit too).

        Raises :class:`sqlite3.Error` with the message a device's sqlite3 prints."""
        self._denied = None
        self._deadline = time.monotonic() + self.timeout_s
        try:
            return self.con.execute(statement, parameters)
        except sqlite3.Error as err:
            raise self._explained(err, statement) from None

    def fetch(self, cursor: sqlite3.Cursor, n: int = 256) -> list[tuple]:
        try:
            return cursor.fetchmany(n)
        except sqlite3.Error as err:
            raise self._explained(err, "") from None

    def _explained(self, err: sqlite3.Error, statement: str) -> sqlite3.Error:
        if self._denied is not None:
            kind, name = self._denied
            if kind == "attach":
                return sqlite3.OperationalError(f"unable to open database: {name}")
            if kind == "function":
                return sqlite3.OperationalError(f"not authorized to use function: {name}")
            return sqlite3.OperationalError(f"not authorized: PRAGMA {name} (the simulated phone keeps SQL "
                                            "inside its own storage)")
        if str(err) == "interrupted" and time.monotonic() > self._deadline:
            return SqlTimeout(f"interrupted: the simulated phone stops an SQL statement after {self.timeout_s:g} s")
        detach = re.match(r"\s*DETACH\s+(?:DATABASE\s+)?(\S+)", statement, re.I)
        if detach and "no such database" in str(err):
            return sqlite3.OperationalError(f"no such database: {detach.group(1).strip(';')}")
        return err

    def data(self) -> bytes:
        """The database file's bytes; empty while the database has no page (nothing was ever written)."""
        self.con.set_authorizer(None)
        try:
            if self.con.execute("PRAGMA page_count").fetchone()[0] == 0:
                return b""
            return db_bytes(self.con)
        finally:
            self.con.set_authorizer(self._authorize)
