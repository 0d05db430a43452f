"""Android's key codes (``android.view.KeyEvent``) by name, and the characters the typing keys type."""

from __future__ import annotations

# Keys a phone acts on (android.view.KeyEvent's codes) beyond typing: the digits 0-9 (7-16), letters
# A-Z (29-54), SPACE (62) and the symbols of KEY_CHARS type into the focused field or the dial pad.
KEYCODE_NAMES = {3: "HOME", 4: "BACK", 5: "CALL", 19: "DPAD_UP", 20: "DPAD_DOWN", 21: "DPAD_LEFT", 22: "DPAD_RIGHT",
                 23: "DPAD_CENTER", 24: "VOLUME_UP", 25: "VOLUME_DOWN", 26: "POWER", 61: "TAB", 66: "ENTER",
                 67: "DEL", 84: "SEARCH", 112: "FORWARD_DEL", 160: "NUMPAD_ENTER", 164: "VOLUME_MUTE",
                 187: "APP_SWITCH", 223: "SLEEP", 224: "WAKEUP"}
KEY_CHARS = {17: "*", 18: "#", 55: ",", 56: ".", 62: " ", 69: "-", 70: "=", 71: "[", 72: "]", 73: "\\", 74: ";",
             75: "'", 76: "/", 77: "@", 81: "+", **{7 + d: str(d) for d in range(10)},
             **{29 + i: chr(ord("a") + i) for i in range(26)}}
