"""The phone's ``sqlite3``, confined to the phone: SQL that a client sends runs on an in-memory copy of a database
file of :attr:`ServedPhone.files`, in a worker process of its own that can reach nothing else.

The SQLite library is the host's, so everything in SQL that names a file would name a host file, and SQLite's heap
limits act on the whole process. Deny-lists of such SQL failed twice, so confinement is structural: each ``sqlite3``
invocation runs in a new worker, this file run as a script (``python -I -S``: the standard library only, started by
:mod:`vlui.served.shell.sqlite`), which

- cannot open a file: before the first statement, its limit of open files is the three it holds (standard input,
  output and error), so the kernel refuses every ``open``, whatever SQL asks for (``ATTACH`` of a host path written
  out or computed, ``VACUUM INTO``, a URI, a temporary file): SQLite itself then answers
  ``unable to open database: PATH``, as a device's sqlite3 does of a path it cannot open; no file may grow either;
- has a memory budget: SQLite's own heap limit (``Error: out of memory``, cleanly), with an address-space limit
  above it for the rest of the process, both sized by the room the database may grow into (:func:`memory_budget`);
  process-wide settings (``hard_heap_limit``) now act on this process only, and may be read, not set;
- has a time budget: each statement stops after ``timeout_s`` (a progress handler; the server kills a worker that
  stays silent past that);
- holds pragmas, SQL functions and virtual table modules to allow-lists (:data:`PRAGMAS`, :data:`READ_ONLY_PRAGMAS`,
  :data:`FUNCTIONS`, :data:`MODULES`): what a later SQLite adds stays denied until someone reads it and lists it.

Server and worker speak in frames (:data:`FRAME`) of plain bytes and JSON (:func:`job`); the worker answers with
output (``o``), one error (``e``) and the database file's new bytes (``d``, only when they changed).
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import sqlite3
import struct
import sys
import time
from collections.abc import Callable, Iterator

MAX_VALUE = 64 << 20  # the largest string or blob a statement may make, whatever the room
WORK_BYTES = 64 << 20  # SQLite's working memory (sorting, temporary tables, results) beside the database
MAX_ATTACHED = 2  # in-memory databases (``ATTACH ':memory:'``), as SQLite bounds them
PROGRESS_EVERY = 10_000  # SQLite VM instructions between two looks at the clock
CHUNK = 64 << 10  # output goes to the server in pieces of about this size
IN_MEMORY = (":memory:", "")  # ATTACH names that open no file ("" is a temporary database, kept in memory)
FRAME = struct.Struct("!cQ")  # a message between server and worker: its kind and the size of what follows

# Functions of SQLite's core, date and time, math, JSON, FTS3/4/5 and R*Tree, and those SQLite calls itself
# (ALTER TABLE's sqlite_rename_*). Left out: load_extension; fts3_tokenizer and fts5, which trust pointers; sqlite_log
# and subtype, test helpers that a device has not.
FUNCTIONS = frozenset("""
    -> ->> abs acos acosh asin asinh atan atan2 atanh avg bm25 ceil ceiling changes char coalesce cos cosh count
    cume_dist current_date current_time current_timestamp date datetime degrees dense_rank exp first_value floor
    format fts5_source_id glob group_concat hex highlight ifnull iif instr json json_array json_array_length
    json_extract json_group_array json_group_object json_insert json_object json_patch json_quote json_remove
    json_replace json_set json_type json_valid julianday lag last_insert_rowid last_value lead length like likelihood
    likely ln log log10 log2 lower ltrim match matchinfo max min mod nth_value ntile nullif offsets optimize
    percent_rank pi pow power printf quote radians random randomblob rank replace round row_number rtreecheck
    rtreedepth rtreenode rtrim sign sin sinh snippet soundex sqlite_compileoption_get sqlite_compileoption_used
    sqlite_drop_column sqlite_rename_column sqlite_rename_quotefix sqlite_rename_table sqlite_rename_test
    sqlite_source_id sqlite_version sqrt strftime substr substring sum tan tanh time total total_changes trim trunc
    typeof unicode unixepoch unlikely upper zeroblob
""".split())
# Pragmas that may be read and set (an argument of the table_info kind names a table): none names a file or acts
# beyond this connection, and what they cost is within the memory budget.
PRAGMAS = frozenset("""
    analysis_limit application_id auto_vacuum automatic_index busy_timeout cache_size cache_spill case_sensitive_like
    cell_size_check checkpoint_fullfsync collation_list compile_options count_changes data_version database_list
    defer_foreign_keys empty_result_callbacks encoding foreign_key_check foreign_key_list foreign_keys freelist_count
    full_column_names fullfsync function_list ignore_check_constraints incremental_vacuum index_info index_list
    index_xinfo integrity_check journal_mode journal_size_limit legacy_alter_table locking_mode module_list optimize
    page_count pragma_list query_only quick_check read_uncommitted recursive_triggers
    reverse_unordered_selects secure_delete short_column_names shrink_memory synchronous table_info table_list
    table_xinfo user_version wal_autocheckpoint wal_checkpoint
""".split())
# Pragmas that may only be read: the limits set here (max_page_count counts pages of page_size), process-wide
# settings and the schema's integrity.
READ_ONLY_PRAGMAS = frozenset("""
    default_cache_size page_size hard_heap_limit max_page_count mmap_size schema_version soft_heap_limit temp_store threads
    trusted_schema writable_schema
""".split())
MODULES = frozenset("fts3 fts4 fts5 fts3tokenize fts4aux fts5vocab rtree rtree_i32".split())  # CREATE VIRTUAL TABLE


# ---------------------------------------------------------------------------------------------- database bytes
def open_db(data: bytes) -> sqlite3.Connection:
    """An in-memory SQLite connection on the bytes of a database file. Bytes that are no database raise
    :class:`sqlite3.DatabaseError` here or at the first query."""
    con = sqlite3.connect(":memory:")
    if hasattr(con, "deserialize"):  # Python 3.11+
        con.deserialize(data)
        return con
    with _scratch_dir() as tmp:
        path = os.path.join(tmp, "db")
        with open(path, "wb") as f:
            f.write(data)
        src = sqlite3.connect(path)
        try:
            src.backup(con)
        finally:
            src.close()
    return con


def db_bytes(con: sqlite3.Connection) -> bytes:
    """The database file of a connection, as bytes (committing first)."""
    con.commit()
    if hasattr(con, "serialize"):  # Python 3.11+
        return con.serialize()
    with _scratch_dir() as tmp:
        path = os.path.join(tmp, "db")
        dst = sqlite3.connect(path)
        try:
            con.backup(dst)
        finally:
            dst.close()
        with open(path, "rb") as f:
            return f.read()


def _scratch_dir():
    """A temporary directory, for Python 3.10, which cannot (de)serialize a database in memory. Imported here
    because the worker, on 3.11+, starts faster without :mod:`tempfile` (and what it imports)."""
    import tempfile

    return tempfile.TemporaryDirectory()


# ---------------------------------------------------------------------------------------------- sqlite3's output
def sqlite_value(value) -> bytes:
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
        if "." not in mantissa and mantissa.lstrip("-").isascii() and mantissa.lstrip("-").isdigit():
            mantissa += ".0"
        return (mantissa + (f"e{exponent}" if e else "")).encode()
    return str(value).encode("utf-8", "surrogateescape")


def sql_statements(sql: str) -> Iterator[str]:
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


def memory_budget(room: int) -> int:
    """SQLite's heap limit for one invocation whose database may grow to ``room`` bytes: twice that (an in-memory
    database grows by doubling its buffer) and :data:`WORK_BYTES`."""
    return 2 * room + WORK_BYTES


def job(sql: list[str], room: int, timeout_s: float, header: bool, separator: bytes, data: bytes) -> list[bytes]:
    """What the server writes to a new worker's standard input: one ``sqlite3`` invocation's SQL arguments (statements
    and dot commands), the room its database may grow into (bytes), the time each statement may take, how rows are
    printed, and the database file's bytes (empty for a new file). Plain data, never a pickle."""
    settings = {"sql": sql, "room": room, "timeout_s": timeout_s, "header": header,
                "separator": separator.decode("latin-1")}
    text = json.dumps(settings).encode("utf-8", "surrogatepass")
    return [FRAME.pack(b"j", len(text)), text, FRAME.pack(b"d", len(data)), data]


# ---------------------------------------------------------------------------------------------- the worker
class _DotError(Exception):
    pass


class _Worker:
    """One invocation's database in the worker: the statements of its job, run confined."""

    def __init__(self, settings: dict, data: bytes) -> None:
        self.timeout_s = float(settings["timeout_s"])
        self.room = int(settings["room"])
        self.header = bool(settings["header"])
        self.separator = settings["separator"].encode("latin-1")
        self.statements = [st for text in settings["sql"] for st in sql_statements(text)]
        self.original = data  # kept to compare at the end: cheaper than hashing it twice
        self._denied: tuple[str, str] | None = None
        self._deadline = 0.0
        self.con = open_db(data) if data else sqlite3.connect(":memory:")
        self.con.isolation_level = None  # autocommit, as the sqlite3 tool
        page_size = self.con.execute("PRAGMA page_size").fetchone()[0]
        self.con.execute(f"PRAGMA max_page_count = {max(1, self.room // page_size)}")
        self.con.execute("PRAGMA temp_store = MEMORY")  # the temporary database and sorting, within the heap limit
        self.con.execute(f"PRAGMA hard_heap_limit = {memory_budget(self.room)}")
        self.con.execute("SELECT randomblob(1)")  # SQLite seeds its generator from /dev/urandom: open it now
        if hasattr(self.con, "setlimit"):  # Python 3.11+
            self.con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max(1, min(MAX_VALUE, self.room)))
            self.con.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, MAX_ATTACHED)
            self.con.setlimit(sqlite3.SQLITE_LIMIT_WORKER_THREADS, 0)
        self.con.set_authorizer(self._authorize)
        self.con.set_progress_handler(self._progress, PROGRESS_EVERY)

    # -------------------------------------------------------------------------------------------- confinement
    def _authorize(self, action: int, arg1: str | None, arg2: str | None, *_) -> int:
        if action == sqlite3.SQLITE_ATTACH and arg1 is not None and arg1 not in IN_MEMORY:
            # a name written out; one computed in SQL (arg1 None) is left to the kernel, which opens no file here
            self._denied = ("attach", arg1)
        elif action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() not in FUNCTIONS:
            self._denied = ("function", arg2 or "")
        elif action == sqlite3.SQLITE_PRAGMA and not ((arg1 or "").lower() in PRAGMAS or (
                (arg1 or "").lower() in READ_ONLY_PRAGMAS and arg2 is None)):
            self._denied = ("pragma", arg1 or "")
        elif action == sqlite3.SQLITE_CREATE_VTABLE and (arg2 or "").lower() not in MODULES:
            self._denied = ("module", arg2 or "")
        else:
            return sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY

    def _progress(self) -> int:
        return 1 if time.monotonic() > self._deadline else 0

    def confine(self) -> None:
        """From here on the process can open no file and write none, and has a bounded address space.

        Only the soft limits of files are lowered, so that :meth:`finish` may raise them again on Python 3.10, whose
        :func:`db_bytes` goes through a temporary file once the statements are done; SQL cannot change a limit."""
        # room for SQLite's heap, one row's values in Python, the database as it came and its two copies at the end
        # (SQLite's and Python's), and the interpreter
        address_space = _address_space() + memory_budget(self.room) + 3 * self.room + 2 * MAX_VALUE + (128 << 20)
        os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the file size limit fails instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        resource.setrlimit(resource.RLIMIT_NOFILE, (3, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    # -------------------------------------------------------------------------------------------- running
    def run(self, send: Callable[[bytes, bytes], None]) -> None:
        """Each statement in turn, its rows sent as they come; the first error is sent and ends the run."""
        try:
            for statement in self.statements:
                if statement.lstrip().startswith("."):
                    send(b"o", self._dot(statement.strip()))
                else:
                    self._statement(statement, send)
        except (sqlite3.Error, _DotError, MemoryError, RecursionError) as err:
            send(b"e", self._explained(err, statement).encode("utf-8", "surrogateescape"))

    def _statement(self, statement: str, send: Callable[[bytes, bytes], None]) -> None:
        self._denied = None
        self._deadline = time.monotonic() + self.timeout_s  # reading the rows counts against the time limit too
        cur = self.con.execute(statement)
        out = bytearray()
        if self.header and cur.description:
            head = self.separator.join(c[0].encode("utf-8", "surrogateescape") for c in cur.description) + b"\n"
        for row in cur:  # one row at a time: a row may hold values of MAX_VALUE bytes
            if self.header and cur.description:
                out += head
                head = b""
            out += self.separator.join(sqlite_value(v) for v in row) + b"\n"
            if len(out) >= CHUNK:
                send(b"o", bytes(out))
                out = bytearray()
        if out:
            send(b"o", bytes(out))

    def _dot(self, command: str) -> bytes:
        self._denied = None
        self._deadline = time.monotonic() + self.timeout_s
        name, *rest = command.split()
        if name == ".tables":
            tables = [r[0] for r in self.con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                                                     "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
            return b"".join(f"{t}\n".encode("utf-8", "surrogateescape") for t in tables)
        if name == ".schema":
            query = "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL" + (" AND tbl_name = ?" if rest else "")
            return b"".join(f"{r[0]};\n".encode("utf-8", "surrogateescape")
                            for r in self.con.execute(query, rest[:1]))
        raise _DotError(f"unknown command or invalid arguments:  \"{name[1:]}\". Enter \".help\" for help")

    def _explained(self, err: BaseException, statement: str) -> str:
        """The message a device's sqlite3 prints after ``Error: ``."""
        if isinstance(err, MemoryError):
            return "out of memory"
        if isinstance(err, RecursionError):  # Python's own stack, e.g. a deeply nested value; SQLite's is bounded
            return "parser stack overflow"
        if self._denied is not None:
            kind, name = self._denied
            if kind == "attach":
                return f"unable to open database: {name}"
            if kind == "function":
                return f"not authorized to use function: {name}"
            if kind == "module":
                return f"no such module: {name}"
            return f"not authorized: PRAGMA {name} (the simulated phone keeps SQL inside its own storage)"
        if str(err) == "interrupted" and time.monotonic() > self._deadline:
            return f"interrupted: the simulated phone stops an SQL statement after {self.timeout_s:g} s"
        detach = re.match(r"\s*DETACH\s+(?:DATABASE\s+)?(\S+)", statement, re.I)
        if detach and "no such database" in str(err):
            return f"no such database: {detach.group(1).strip(';')}"
        return str(err)

    def finish(self) -> bytes | None:
        """The database file's bytes when the run changed them, else None; empty while it has no page."""
        self.con.set_authorizer(None)
        self.con.set_progress_handler(None, 0)
        self.con.execute("PRAGMA hard_heap_limit = 0")  # the copy made here is the last allocation
        if not hasattr(self.con, "serialize"):  # Python 3.10 copies the database through a temporary file
            for limit in (resource.RLIMIT_NOFILE, resource.RLIMIT_FSIZE):
                resource.setrlimit(limit, (resource.getrlimit(limit)[1],) * 2)
        data = db_bytes(self.con) if self.con.execute("PRAGMA page_count").fetchone()[0] else b""
        return None if data == self.original else data


def _address_space() -> int:
    """This process's address space now, in bytes."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _read_frame(stream) -> bytes:
    size = FRAME.unpack(stream.read(FRAME.size))[1]
    return stream.read(size)


def _serve_one() -> int:
    """The worker: read a job from standard input, run it confined, write what it prints to standard output."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer

    def send(kind: bytes, payload: bytes) -> None:
        stdout.write(FRAME.pack(kind, len(payload)))
        stdout.write(payload)
        stdout.flush()

    settings = json.loads(_read_frame(stdin).decode("utf-8", "surrogatepass"))
    try:
        worker = _Worker(settings, _read_frame(stdin))
    except (sqlite3.Error, MemoryError) as err:  # bytes that are no database, found at once
        send(b"e", str(err).encode() if not isinstance(err, MemoryError) else b"out of memory")
        return 0
    stdin.close()
    worker.confine()
    try:
        worker.run(send)
    finally:  # what ran before an error stays done, as on a device
        try:
            data = worker.finish()
        except (sqlite3.Error, MemoryError) as err:
            send(b"e", str(err).encode() if not isinstance(err, MemoryError) else b"out of memory")
            data = None
        if data is not None:
            send(b"d", data)
    return 0


if __name__ == "__main__":
    sys.exit(_serve_one())
