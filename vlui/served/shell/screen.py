"""The screen and input: ``wm`` (size, density), ``input`` (tap, swipe, keyevent, text; :func:`input_`, as Python has
``input``), ``screencap`` (raw and PNG) and ``uiautomator dump``."""

from __future__ import annotations

import io as _io
import re
import weakref
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from PIL import Image

from vlui.android.keys import KEYCODE_NAMES
from vlui.served import configure
from vlui.served.phone import ServedPhone
from vlui.served.shell.context import DUMP_PATH, Command, Io, Session, ShellApi, UsageError, getopt

RGBA_8888, COLORSPACE_SRGB = 1, 1  # screencap's raw header: format and (Android 9 and later) colour space


PNG_LEVEL = 1  # zlib level of ``screencap -p``: a device's encoder compresses harder, and takes ~100 ms longer


@dataclass
class _Screencap:
    """A frame in screencap's formats: converted once, so screencaps of a screen seen before are almost free."""

    frame: np.ndarray
    raw: bytes | memoryview
    png: bytes | None = None


SCREENCAP_CACHE = 8  # frames kept converted per phone (9 MB each at 1080x2160): an episode's screens recur


# One cache per served phone, dropped with it, most recent last. Frames are the renderer's read-only arrays: the same
# array is the same picture, so the identity of the frame is the key (the entry holds the frame, so it stays unique).
_SCREENCAPS: weakref.WeakKeyDictionary[ServedPhone, OrderedDict[int, _Screencap]] = weakref.WeakKeyDictionary()


def rgba8888(frame: np.ndarray) -> memoryview:
    """``(H, W, 3)`` uint8 RGB as ``screencap`` writes it raw on Android 10: width, height, format (1: RGBA_8888) and
    colour space (1: sRGB) as little-endian uint32, then the rows as RGBA with alpha 255."""
    h, w, _ = frame.shape
    n = h * w
    flat = np.ascontiguousarray(frame).reshape(-1)
    out = np.empty(4 + n, "<u4")
    out[:4] = (w, h, RGBA_8888, COLORSPACE_SRGB)
    # Pixel i read as a little-endian uint32 at byte 3i holds R, G, B and the next pixel's R; setting the top byte
    # to 0xFF makes it R, G, B, 255. One vectorised pass (~2 ms at 1080x2160) instead of a strided copy (~20 ms).
    pixels = np.ndarray((n - 1,), "<u4", buffer=flat, strides=(3,))
    np.bitwise_or(pixels, 0xFF000000, out=out[4:-1])
    r, g, b = (int(v) for v in flat[-3:])
    out[-1] = r | g << 8 | b << 16 | 0xFF000000
    out.setflags(write=False)  # read-only: the transport sends it without a copy
    return memoryview(out).cast("B")


def _png(raw: bytes | memoryview, width: int, height: int) -> bytes:
    img = Image.frombuffer("RGBA", (width, height), memoryview(raw)[16:], "raw", "RGBA", 0, 1)
    buf = _io.BytesIO()
    img.save(buf, format="PNG", compress_level=PNG_LEVEL)
    return buf.getvalue()


# Android 10's ``input`` (frameworks/base/cmds/input): its sources, commands and usage text.
_INPUT_SOURCES = ("keyboard", "dpad", "gamepad", "touchscreen", "mouse", "stylus", "trackball", "touchpad",
                  "touchnavigation", "joystick")


_INPUT_USAGE = """Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]

The sources are: 
{sources}

-d: specify the display ID.
      (Default: -1 for key event, 0 for motion event if not specified.)
The commands and default sources are:
      text <string> (Default: touchscreen)
      keyevent [--longpress] <key code number or name> ... (Default: keyboard)
      tap <x> <y> (Default: touchscreen)
      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)
      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)
      press (Default: trackball)
      roll <dx> <dy> (Default: trackball)
""".format(sources="\n".join(f"      {s}" for s in _INPUT_SOURCES))


# KeyEvent's names of the keys the simulated phone acts on (``input keyevent NAME``, with or without KEYCODE_)
_KEY_NAMES = {**KEYCODE_NAMES, 17: "STAR", 18: "POUND", 55: "COMMA", 56: "PERIOD", 62: "SPACE", 69: "MINUS",
              70: "EQUALS", 71: "LEFT_BRACKET", 72: "RIGHT_BRACKET", 73: "BACKSLASH", 74: "SEMICOLON",
              75: "APOSTROPHE", 76: "SLASH", 77: "AT", 81: "PLUS", **{7 + d: str(d) for d in range(10)},
              **{29 + i: chr(ord("A") + i) for i in range(26)}}


_KEYCODES = {name: code for code, name in _KEY_NAMES.items()}


_JAVA_FLOAT = re.compile(r"[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?)")


def _java_float(text: str) -> float:
    """``Float.parseFloat``'s syntax (``1.5``, ``2e3``, ``7f``, ``NaN``). The value is Python's float, not Java's
    32-bit one, so that ``input tap 540.1 ...`` reaches the phone as the 540.1 an in-process caller passes."""
    text = text.strip()
    if not _JAVA_FLOAT.fullmatch(text):
        raise ValueError(text)
    return float(text.rstrip("fFdD"))


def _java_int(text: str) -> int:
    if not re.fullmatch(r"[+-]?\d+", text):
        raise ValueError(text)
    return int(text)


def _keycode(arg: str) -> int:
    """``KeyEvent.keyCodeFromString``: a number, or a name with or without ``KEYCODE_``; 0 (unknown) otherwise."""
    try:
        return _java_int(arg)
    except ValueError:
        return _KEYCODES.get(arg.removeprefix("KEYCODE_"), 0)


def _input_text(arg: str) -> str:
    """What ``input text ARG`` types: Android 10's loop that turns ``%s`` into a space (``%%s`` into ``% ``)."""
    chars = list(arg)
    escape = False
    i = 0
    while i < len(chars):
        if escape:
            escape = False
            if chars[i] == "s":
                chars[i] = " "
                del chars[i - 1]
                i -= 1
        if chars[i] == "%":
            escape = True
        i += 1
    return "".join(chars)


def wm(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    sub = args[0] if args else None
    if sub == "size" and len(args) == 1:
        with sh.phone.lock:
            width, height = sh.phone.device.size
        io.say(f"Physical size: {width}x{height}\n")
        return 0
    if sub == "density" and len(args) == 1:
        physical, override = configure.density(sh.phone)
        io.say(f"Physical density: {physical}\n" + (f"Override density: {override}\n" if override else ""))
        return 0
    if sub == "density" and len(args) == 2:
        if args[1] == "reset":
            configure.set_density(sh.phone, None)
            return 0
        try:
            dpi = _java_int(args[1])
        except ValueError:
            io.complain(f"Error: bad number java.lang.NumberFormatException: For input string: \"{args[1]}\"\n")
            return 255
        if dpi < 72:
            io.complain("Error: Density must be at least 72\n")
            return 255
        configure.set_density(sh.phone, dpi)
        return 0
    if sub == "size":
        io.complain("Error: changing the screen size is not supported by the simulated phone\n")
        return 255
    if sub in (None, "help", "-h"):
        io.say("Window manager (window) commands:\n  size [reset|WxH|WdpxHdp]\n    Return or override display "
               "size.\n  density [reset|DENSITY]\n    Return or override display density.\n")
        return 0
    io.say(f"Unknown command: {sub}\n")
    return 255


def input_(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    def usage(error: str) -> int:
        # Deviation: Android 10's input prints this and exits 0; the simulated phone exits 1, so that a client
        # that checks exit statuses sees its mistake.
        io.complain(_INPUT_USAGE + "\n" + error + "\n")
        return 1

    args = list(args)
    if args and args[0] in _INPUT_SOURCES:
        args.pop(0)
    if args[:1] == ["-d"]:
        if len(args) < 2 or not args[1].lstrip("-").isdigit():
            return usage("Error: Invalid arguments for display ID.")
        args = args[2:]
    if not args:
        return usage("Argument expected after \"input\"")
    command, rest = args[0], args[1:]
    dev = sh.phone.device
    try:
        if command == "text":
            if not rest:
                return usage("Argument expected after \"text\"")
            with sh.phone.lock:
                dev.text(_input_text(rest[0]))  # as Android 10: the first argument is typed, the rest ignored
        elif command == "keyevent":
            long_press = rest[:1] == ["--longpress"]
            if long_press:
                rest = rest[1:]
            if not rest:
                return usage(f"Argument expected after \"{args[-1]}\"")
            for arg in rest:  # each a press (or a long press); an unknown code is injected and does nothing
                with sh.phone.lock:
                    dev.press_keycode(_keycode(arg), long_press)
        elif command == "tap":
            if len(rest) < 2:
                return usage(f"Argument expected after \"{args[-1]}\"")
            x, y = _java_float(rest[0]), _java_float(rest[1])
            with sh.phone.lock:
                dev.tap(x, y)
        elif command == "swipe":
            if len(rest) < 4:
                return usage(f"Argument expected after \"{args[-1]}\"")
            x1, y1, x2, y2 = (_java_float(a) for a in rest[:4])
            duration = _java_int(rest[4]) if len(rest) > 4 else -1
            with sh.phone.lock:
                dev.swipe(x1, y1, x2, y2, duration if duration >= 0 else 300)
        elif command in ("press", "roll"):  # trackball events: the simulated phone has no trackball
            if command == "roll":
                for arg in (rest[0], rest[1]):
                    _java_float(arg)
        elif command == "draganddrop":
            io.complain("Error: draganddrop (a long press, then a move) is not supported by the simulated "
                        "phone\n")
            return 1
        else:
            return usage(f"Error: Unknown command: {command}")
    except (ValueError, IndexError):
        return usage(f"Error: Invalid arguments for command: {command}")
    return 0


def screencap(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    usage = ("usage: screencap [-hp] [-d display-id] [FILENAME]\n   -h: this message\n   -p: save the file as a "
             "png.\n   -d: specify the display id to capture (default: 0)\nIf FILENAME ends with .png it will "
             "be saved as a png.\nIf FILENAME is not given, the results will be printed to stdout.\n")
    try:
        opts, operands = getopt(args, "hp", "d")
    except UsageError:
        io.complain(usage)
        return 1
    o = dict(opts)
    if "h" in o or len(operands) > 1 or o.get("d", "0") != "0":
        io.complain(usage)
        return 1 if "h" not in o else 0
    png = "p" in o or (bool(operands) and operands[0].endswith(".png"))
    data = _screen(sh.phone, png)
    if not operands:
        io.out(data)
        return 0
    path = sh.path(s, operands[0])
    with sh.phone.lock:
        problem = sh.unwritable(path)
        if not problem:
            sh.phone.files[path] = bytes(data)
    if problem:
        io.complain(f"Error opening file: {operands[0]} ({problem})\n")
        return 1
    return 0


def _screen(phone: ServedPhone, png: bool) -> bytes | memoryview:
    """The current frame as screencap writes it; converted once per frame (the conversions run unlocked:
    frames are immutable)."""
    with phone.lock:
        frame = phone.device.screen()
        caps = _SCREENCAPS.setdefault(phone, OrderedDict())
        cap = caps.get(id(frame))
        if cap is not None:
            caps.move_to_end(id(frame))
        raw = cap.raw if cap is not None else None
        encoded = cap.png if cap is not None else None
    if raw is None:
        raw = rgba8888(frame)
    if png and encoded is None:
        encoded = _png(raw, frame.shape[1], frame.shape[0])
    with phone.lock:
        cap = caps.get(id(frame))
        if cap is None:
            cap = caps[id(frame)] = _Screencap(frame, raw)
            while len(caps) > SCREENCAP_CACHE:
                caps.popitem(last=False)
        if encoded is not None:
            cap.png = encoded
    return encoded if png else raw


def uiautomator(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    if not args or args[0] != "dump":
        text = ("Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\n"
                "help: displays help message\n\n"
                "dump: creates an XML dump of current UI hierarchy\n    dump [--verbose][file]\n"
                "      [--compressed]: dumps compressed layout information.\n"
                "      [file]: the location where the dumped XML should be stored, default is\n"
                f"      {DUMP_PATH}\n")
        if args and args[0] != "help":
            io.complain(f"uiautomator {args[0]} is not supported by the simulated phone\n" + text)
            return 1
        io.say(text)
        return 0
    # --compressed (drop the nodes that are not important for accessibility) is accepted; the dump is complete
    operands = [a for a in args[1:] if a not in ("--compressed", "--verbose")]
    target = operands[0] if operands else DUMP_PATH
    path = sh.path(s, target)
    with sh.phone.lock:
        xml = sh.phone.device.ui_xml().encode("utf-8")
        problem = "" if path == "/dev/tty" else sh.unwritable(path)
        if not problem and path != "/dev/tty":
            sh.phone.files[path] = xml
    if problem:
        io.complain(f"ERROR: could not write dump to {path} ({problem})\n")
        return 1
    if path == "/dev/tty":
        io.out(xml)
    io.say(f"UI hierchary dumped to: {path}\n")  # sic: Android's spelling
    return 0


COMMANDS: dict[str, Command] = {"wm": wm, "input": input_, "screencap": screencap, "uiautomator": uiautomator}
