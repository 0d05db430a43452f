"""The simulated phone's shell: what ``adb shell`` and ``adb exec-out`` run on it.

``Shell(phone).run(command, write, cancelled) -> int`` runs one command line as ``/system/bin/sh -c`` does on an
Android 10 emulator after ``adb root``: the output (stdout and stderr together, as the legacy ``shell:`` service
merges them) goes through ``write`` and the exit status is returned. Streaming commands (``logcat`` without ``-d``,
``sleep``) return when ``cancelled`` is set or the phone closes.

The language is what Android 10's mksh runs in a script: POSIX quoting, ``$`` parameters and ``$(( ))`` (32-bit, as
mksh), field splitting and globs over the phone's files, lists, pipelines of any length, ``{ }``, ``if``, ``while``,
``until``, ``for``, ``case``, functions, and the redirections ``>``, ``>>``, ``N>&M`` and ``<``. A script may also be
read from a pipe or a terminal (:meth:`Shell.feed`, :meth:`Shell.run_script`). Nothing is ever evaluated: the script
is parsed into a tree and every command is a Python function over the phone's data. What a real shell would run but
this one cannot (``$(...)``, backquotes, ``&``, subshells, here-documents) is a syntax error, never something else.
Every size a client sends is bounded where it arrives (a line below MAX_ARG_STRLEN, arguments and variables below
ARG_MAX, 64 levels of nesting, a CPU budget per line), and parsing is linear.

Commands print what Android 10 prints (``input``'s usage, ``wm``'s "Physical size", screencap's raw format,
uiautomator's "hierchary"), so clients written for a real device work unchanged. Input commands call
:class:`~vlui.sim.phone.SimDevice` with exactly the arguments an in-process caller passes, so an episode driven over
ADB leaves the same state and the same log. Where this shell differs from a device on purpose, a comment says so.

A command is a function ``(sh, s, io, args) -> status`` of its family's module, listed in that module's ``COMMANDS``
table; ``sh`` is the shell as :class:`~vlui.served.shell.context.ShellApi` describes it, all a command may use of it.
No module reaches into another's private names (a leading underscore means the module's own), which
``tests/served/test_shell_families.py`` checks. The modules:

- :mod:`~vlui.served.shell.runner`: :class:`Shell` and :data:`~vlui.served.shell.runner.COMMANDS`, the one table of
  commands by name (the families' tables merged; a name defined twice is an error);
- :mod:`~vlui.served.shell.language` (lexer, parser, globs) and :mod:`~vlui.served.shell.context` (the commands'
  interface to the shell, session, streams, options, environment);
- :mod:`~vlui.served.shell.filters`: ``cat head tail wc sort grep cut sed`` (:data:`~vlui.served.shell.filters.FILTERS`);
- :mod:`~vlui.served.shell.builtins`: ``echo true false : exit sleep cd pwd id whoami sh export unset exec test [
  read break continue return local set which printf``;
- :mod:`~vlui.served.shell.files`: ``ls mkdir rm rmdir cp mv ln touch chmod chown md5sum find stat``;
- :mod:`~vlui.served.shell.system`: ``getprop setprop start stop date settings cmd svc service media df env
  content``;
- :mod:`~vlui.served.shell.screen`: ``wm input screencap uiautomator``;
- :mod:`~vlui.served.shell.log`: ``log logcat``;
- :mod:`~vlui.served.shell.apps`: ``am monkey pm``;
- :mod:`~vlui.served.shell.dumpsys`: ``dumpsys``;
- :mod:`~vlui.served.shell.sqlite`: ``sqlite3``;
- :mod:`~vlui.served.shell.procs`: ``ps pidof kill uname su run-as toybox``.

A new command is one function in its family's module and one entry in that module's ``COMMANDS`` (a new family: a
module with its ``COMMANDS``, added to :data:`~vlui.served.shell.runner.FAMILIES`); docs/architecture.md has the recipe.
"""

from vlui.served.shell.log import LOG_MAX_PAYLOAD
from vlui.served.shell.runner import COMMANDS, Shell
from vlui.served.shell.screen import SCREENCAP_CACHE, rgba8888
from vlui.served.shell.system import MAX_SET_PROPS, PROP_VALUE_MAX

__all__ = ["COMMANDS", "LOG_MAX_PAYLOAD", "MAX_SET_PROPS", "PROP_VALUE_MAX", "SCREENCAP_CACHE", "Shell", "rgba8888"]
