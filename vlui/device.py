"""The device interface: what every backend (the simulated phone, a real device over ADB) offers to the environment.

Nothing above this seam knows which backend it talks to. Coordinates are device pixels, origin at the top-left of
the screen in its current orientation; images are ``(H, W, 3)`` uint8 RGB arrays.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from vlui.errors import VluiError
from vlui.spec import view_parts

KEYS = ("BACK", "HOME", "APP_SWITCH")  # the navigation keys; Android keycodes 4, 3 and 187
KEYCODE_ENTER = 66  # the keyboard's enter key (KeyEvent.KEYCODE_ENTER), as ``input keyevent 66`` presses it

#: What an observation is, as a number that datasets and evaluations record (``env.measured()``): 2 is
#: :func:`observe` of the full-resolution screen on every backend. Version 1 (vlui before 2026-11-28) had the
#: simulated phone draw its screens directly at the observation's size, which differed from a resized screenshot
#: by 1.6 to 3.2 levels on average and in up to 30% of pixels by more than 8 levels.
OBSERVATION_VERSION = 2


REDUCING_GAP = 2.0  # Pillow's reducing_gap: a box reduction first, to within twice the size


def reduction(width: int, height: int, out_width: int, out_height: int) -> tuple[int, int]:
    """The ``(x, y)`` factors of the box reduction with which :func:`observe` starts on a ``width`` x ``height``
    screen (Pillow's, for ``reducing_gap``); ``(1, 1)``: none."""
    return int(width / out_width / REDUCING_GAP) or 1, int(height / out_height / REDUCING_GAP) or 1


def observe(screen: np.ndarray | Image.Image, height: int, width: int, view: str | None = None) -> np.ndarray:
    """The observation of a full-resolution screen: resized to ``(height, width, 3)`` uint8 by a box reduction to
    within twice the size, then bilinear (PIL's ``reducing_gap=2.0``), whatever the aspect ratio. ``view``
    (:meth:`vlui.spec.ObsActionSpec.view`) transforms the screen first, in order: ``mirrored``, left to right
    (:func:`vlui.spec.mirrored`); ``rotated``, a quarter counter-clockwise (:func:`vlui.spec.turned`); ``stacked``,
    its left half put above its right half (:func:`vlui.spec.stacked`; an odd pixel column in the middle goes to the
    left half, and the right half is padded black to its width).

    The one definition every backend uses: a screenshot from an emulator or a phone, and the simulated phone's own
    drawing of the full screen, are observed alike, so a policy sees the same pixels on both. ``screen`` is an
    ``(H, W, 3|4)`` uint8 array (a 4-channel one, as a raw ``screencap``, is read in place) or an RGB image."""
    for part in view_parts(view):
        rgb = np.asarray(screen)[:, :, :3]
        if part == "mirrored":
            screen = np.ascontiguousarray(rgb[:, ::-1])
        elif part == "rotated":
            screen = np.ascontiguousarray(np.rot90(rgb))
        elif part == "stacked":
            screen = _stacked(rgb)
        else:
            raise ValueError(f"a screen is observed mirrored, rotated or stacked, not {part!r}")
    if isinstance(screen, Image.Image):
        img = screen
    elif screen.shape[2] == 4 and screen.flags.c_contiguous:
        h, w = screen.shape[:2]
        img = Image.frombuffer("RGBX", (w, h), screen, "raw", "RGBX", 0, 1)
    else:
        img = Image.fromarray(np.ascontiguousarray(screen[:, :, :3]))
    if img.size == (width, height):
        return np.asarray(img.convert("RGB"))
    return np.asarray(img.resize((width, height), Image.BILINEAR, reducing_gap=REDUCING_GAP).convert("RGB"))


def _stacked(screen: np.ndarray) -> np.ndarray:
    """``(H, W, 3)`` -> ``(2H, ceil(W / 2), 3)``: the left half above the right half."""
    half = (screen.shape[1] + 1) // 2
    out = np.zeros((2 * screen.shape[0], half, 3), np.uint8)
    out[:screen.shape[0]] = screen[:, :half]
    out[screen.shape[0]:, :screen.shape[1] - half] = screen[:, half:]
    return out


@dataclass(frozen=True)
class PinnedApp:
    """A third-party app a benchmark's phones have installed, at the version the benchmark pins (B-MoCA release
    2.5's Calculator 8.6, ...): ``key`` is its key in ``vlui/android/data/apps.yaml``, ``name`` its label."""

    key: str
    name: str
    package: str
    version: str


@dataclass(frozen=True)
class HomeScreen:
    """A benchmark's home screen for one of its phones, as its launcher database holds it (B-MoCA release 2.5's
    ``home_screen_db``): the hotseat's apps by slot (None: an empty slot) and the first page's icons as
    ``(app, row, column)`` on a grid of ``rows`` rows; ``source`` names the database."""

    hotseat: tuple[str | None, ...]
    workspace: tuple[tuple[str, int, int], ...]
    rows: int
    source: str


class Device(ABC):
    """A phone or tablet that can be looked at, touched, and reset to a snapshot."""

    #: Seconds to wait between an action and the next observation when the config leaves it to the device: the
    #: screen and the log settle in that time on a real device (B-MoCA acts at 1/3 Hz); the simulated phone is
    #: settled at once.
    observation_wait_s: float = 0.0

    @property
    @abstractmethod
    def size(self) -> tuple[int, int]:
        """Screen ``(width, height)`` in pixels."""

    @property
    @abstractmethod
    def density(self) -> int:
        """Screen density in dots per inch (``wm density``)."""

    def locale_id(self) -> str:
        """The device's locale as B-MoCA names it (``en-US``, ``zh-hans-CN``)."""
        return "en-US"

    @abstractmethod
    def screenshot(self) -> np.ndarray:
        """The full-resolution screen, ``(H, W, 3)`` uint8."""

    def observation(self, height: int, width: int) -> np.ndarray:
        """The screen as the agent sees it: :func:`observe` of the full-resolution screen, ``(height, width, 3)``
        uint8. A backend may compute it faster (from a cache, say), never differently."""
        return observe(self.screenshot(), height, width)

    @abstractmethod
    def ui_xml(self) -> str:
        """The view hierarchy as ``uiautomator dump`` writes it."""

    @abstractmethod
    def tap(self, x: float, y: float) -> None:
        """Touch and lift at ``(x, y)`` pixels. A point outside the screen does nothing, as on a real screen."""

    @abstractmethod
    def swipe(self, x1: float, y1: float, x2: float, y2: float, duration_ms: int = 300) -> None:
        """Touch at ``(x1, y1)``, move to ``(x2, y2)`` over ``duration_ms``, lift."""

    @abstractmethod
    def key(self, name: str) -> None:
        """Press a navigation key: one of :data:`KEYS`."""

    @abstractmethod
    def text(self, value: str) -> None:
        """Type ``value`` into the focused text field (nothing happens if no field has focus)."""

    @abstractmethod
    def log_mark(self) -> int:
        """A position in the device log; :meth:`log_lines` returns what was logged after it."""

    @abstractmethod
    def log_lines(self, since: int = 0, tags: Iterable[str] | None = None) -> list[str]:
        """Log lines in ``threadtime`` format written after ``since``, optionally only those of ``tags``."""

    @abstractmethod
    def clear_log(self) -> None:
        """Empty the device log (``logcat -c``)."""

    @abstractmethod
    def load_snapshot(self, snapshot: str) -> None:
        """Restore the device to a snapshot (its configuration and app state), at the home screen."""

    def keyboard_enter(self) -> None:
        """Press the keyboard's enter key (``input keyevent 66``): the focused field's editor action (search, send,
        done). Backends that cannot say so with a clear error."""
        raise VluiError(f"{type(self).__name__} cannot press the keyboard's enter key")

    def open_app(self, app: str) -> None:
        """Start app ``app`` (its key in vlui/android/data/apps.yaml) as the launcher does, as AndroidWorld's
        ``open_app`` starts it (``monkey -p PACKAGE -c android.intent.category.LAUNCHER 1``); an app the device does
        not have is not started, as monkey starts none. Backends that cannot say so with a clear error."""
        raise VluiError(f"{type(self).__name__} cannot start apps ({app})")

    def wait(self) -> None:
        """Let the device run for a step without input (AndroidWorld's ``wait``). Backends that cannot say so with a
        clear error."""
        raise VluiError(f"{type(self).__name__} cannot wait")

    def install_apps(self, pinned: Sequence[PinnedApp], home: HomeScreen | None = None) -> None:
        """Have these third-party apps installed, on top of the loaded snapshot, and where ``home`` is given the home
        screen the benchmark's phone has with them: the simulated phone installs them and lays its home screen out
        so; a real device must have both already (vlui downloads no app and changes no home screen) and one that
        lacks an app is an error that names it. Backends that cannot say so with a clear error."""
        raise VluiError(f"{type(self).__name__} cannot install apps ({', '.join(a.name for a in pinned)})")

    def set_state(self, fields: dict) -> None:
        """Put the device in a task's starting state (``{airplane_mode: true}``, a call in progress, ...), on top of
        the loaded snapshot. Backends that cannot say so with a clear error."""
        raise VluiError(f"{type(self).__name__} cannot set a task's starting state ({', '.join(fields)})")

    def perturb(self, seed: int) -> dict[str, Any]:
        """Episode-level randomness at the start of an episode (``env.stochastic=true``), seeded; returns what it
        did. Only the simulated phone has it: a real device brings its own."""
        raise VluiError(f"env.stochastic=true randomises the simulated phone's episodes; {type(self).__name__} is a "
                        "real device with its own randomness: leave env.stochastic=false")

    def check_state(self, spec: dict) -> bool:
        """Whether the device's state meets a task's ``state_check``: ``{"volume.media": 7}`` (equal) or
        ``{"brightness_percent": {"value": 40, "tolerance": 2}}`` (within); see :func:`state_meets`. Backends that
        cannot read their state say so with a clear error."""
        raise VluiError(f"{type(self).__name__} cannot check a task's device state ({', '.join(spec)}); "
                        "run the task on the simulated phone (env=sim)")

    def state_value(self, path: str) -> Any:
        """The value at ``path`` of the device's own state (``volume.alarm``, ``clock.alarms``, ``front.app``), as
        a task's truth reads it (:mod:`vlui.tasks.truth`): only the simulated phone knows its state so; other
        backends say so."""
        raise VluiError(f"{type(self).__name__} cannot read its own state ({path}): a task's truth is measured on the "
                        "simulated phone (env=sim)")

    def shared_prefs(self, app: str, file: str) -> str | None:
        """The text of app ``app``'s shared-preferences ``file`` (``/data/data/<package>/shared_prefs/<file>``), or
        None where the app has not written it. What a B-MoCA evaluator check reads of Snapseed and Wikipedia
        (:mod:`vlui.tasks.checks`); the simulated phone reads the files of its apps that keep them (Wikipedia's),
        other backends none yet, and say so."""
        raise VluiError(f"{type(self).__name__} cannot read the {app} app's shared preferences ({file})")

    def close(self) -> None:  # noqa: B027 - optional for backends that hold nothing
        """Release the device's resources."""


def state_meets(spec: dict, value_of: Callable[[str], Any]) -> bool:
    """Whether every ``path: want`` of a ``state_check`` holds, reading each path's value with ``value_of``: equal,
    within ``tolerance`` of ``{"value": v, "tolerance": t}``, over ``{"above": n}``, or, for a list (alarms, messages),
    ``{"contains": {field: want, ...}}``: one of its items has every field as wanted (a field's want may be
    ``{"includes": text}``: the text is part of the field's, ignoring case; ``{"number": n}``: the field is the
    phone number ``n`` as Android loosely compares numbers, on their last 7 digits; or ``{"contains": {...}}``: the
    field is itself a list with such an item, as a conversation's messages)."""
    for path, want in spec.items():
        have = value_of(path)
        if isinstance(want, dict) and "contains" in want:
            if not any(item_meets(item, want["contains"]) for item in have or ()):
                return False
        elif isinstance(want, dict) and "above" in want:
            if not have > want["above"]:
                return False
        elif isinstance(want, dict):
            if abs(have - want["value"]) > want.get("tolerance", 0):
                return False
        elif have != want:
            return False
    return True


def item_meets(item: Any, fields: dict[str, Any]) -> bool:
    """Whether a list's item (a mapping or one of an app's dataclasses) has every field as wanted (as
    :func:`state_meets` reads ``contains``)."""
    for name, want in fields.items():
        have = item.get(name) if isinstance(item, dict) else getattr(item, name, None)
        if isinstance(want, dict) and "includes" in want:
            if not isinstance(have, str) or str(want["includes"]).casefold() not in have.casefold():
                return False
        elif isinstance(want, dict) and "contains" in want:
            if not isinstance(have, list) or not any(item_meets(i, want["contains"]) for i in have):
                return False
        elif isinstance(want, dict) and "number" in want:
            digits = ["".join(c for c in str(v) if c.isdigit())[-7:] for v in (have or "", want["number"])]
            if not digits[0] or digits[0] != digits[1]:
                return False
        elif have != want:
            return False
    return True
