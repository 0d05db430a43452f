"""``sqlite3`` on the phone's database files, confined to the phone (:mod:`vlui.served.confined_sql`)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator

from vlui.served.confined_sql import ConfinedDb
from vlui.served.phone import ServedPhone
from vlui.served.shell.context import _Io, _Session, _UsageError


def _sqlite_value(value) -> bytes:
    """A value as sqlite3's list mode prints it: NULL empty, reals always with a point (``printf %!.15g``)."""
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, float):
        text = "%.15g" % value
        if text in ("inf", "-inf"):
            return b"Inf" if text == "inf" else b"-Inf"
        mantissa, e, exponent = text.partition("e")
        if "." not in mantissa and mantissa.lstrip("-").isdigit():
            mantissa += ".0"
        return (mantissa + (f"e{exponent}" if e else "")).encode()
    return str(value).encode("utf-8", "surrogateescape")


def _sql_statements(sql: str) -> Iterator[str]:
    """The complete statements of ``sql``, one by one (a ``;`` inside a string does not end one)."""
    buf = ""
    for piece in re.split(r"(;)", sql):
        buf += piece
        if piece == ";" and sqlite3.complete_statement(buf):
            if buf.strip(" \t\r\n;"):
                yield buf
            buf = ""
    if buf.strip(" \t\r\n;"):
        yield buf


class SqliteCommands:
    """The sqlite commands of :class:`~vlui.served.shell.runner.Shell` (a mixin: ``self`` is the shell)."""

    phone: ServedPhone

    # ---------------------------------------------------------------------------------------------- sqlite3
    def _sqlite3(self, s: _Session, io: _Io, args: list[str]) -> int:
        """``sqlite3 [-header] [-separator SEP] DB [SQL...]`` in list mode, on a database file in ``phone.files``."""
        header, separator = False, b"|"
        args = list(args)
        while args and args[0].startswith("-"):
            opt = args.pop(0).lstrip("-")
            if opt == "header":
                header = True
            elif opt == "noheader":
                header = False
            elif opt == "separator" and args:
                separator = args.pop(0).encode()
            elif opt not in ("list", "batch", "bail"):
                io.complain(f"sqlite3: Error: unknown option: -{opt}\nUse -help for a list of options.\n")
                return 1
        if not args:
            io.complain("sqlite3: the simulated phone needs a database file: sqlite3 DB \"SQL\"\n")
            return 1
        db, sql = args[0], args[1:]
        path = self._path(s, db)
        with self.phone.lock:  # a copy of the file; the SQL runs unlocked, so a slow query stalls no other client
            original = self.phone.files.get(path)
            problem = "" if original is not None else self._unwritable(path)
            room = self.phone.files.room(replacing=path)
        if problem:
            io.complain(f"Error: unable to open database \"{db}\": unable to open database file\n")
            return 1
        status, data = 0, original or b""
        try:
            with ConfinedDb(data, room, self.phone.limits.sql_timeout_s) as con:
                try:
                    for statement in (st for text in sql for st in _sql_statements(text)):
                        if self._stopped(s):
                            status = 1
                            break
                        if statement.lstrip().startswith("."):
                            io.out(self._sqlite_dot(con, statement.strip()))
                            continue
                        cur = con.execute(statement)
                        first = True
                        while rows := con.fetch(cur):
                            if header and first and cur.description:
                                io.out(separator.join(c[0].encode() for c in cur.description) + b"\n")
                            first = False
                            io.out(b"".join(separator.join(_sqlite_value(v) for v in row) + b"\n" for row in rows))
                finally:  # statements that ran before an error stay done (autocommit), as on a device
                    data = con.data()
        except (sqlite3.Error, _UsageError) as err:
            io.complain(f"Error: {err}\n")
            status = 1
        if data != (original or b""):
            with self.phone.lock:  # the last writer's file wins, as with two sqlite3 processes on a device
                self.phone.files[path] = data
        return status

    def _sqlite_dot(self, con: ConfinedDb, command: str) -> bytes:
        name, *rest = command.split()
        if name == ".tables":
            tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                                                "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
            return b"".join(f"{t}\n".encode() for t in tables)
        if name == ".schema":
            query = "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL" + (" AND tbl_name = ?" if rest else "")
            return b"".join(f"{r[0]};\n".encode() for r in con.execute(query, rest[:1]))
        raise _UsageError(f"unknown command or invalid arguments:  \"{name[1:]}\". Enter \".help\" for help")
