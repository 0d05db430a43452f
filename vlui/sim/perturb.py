"""Episode-level randomness on the simulated phone (``env.stochastic=true``): what differs from one episode of the
same task and snapshot to the next on a real phone, drawn from the episode's seed.

- **The clock**: the episode starts up to 59 minutes after the snapshot's time (the status bar's clock, the alarm
  list's "in N hours" texts).
- **A notification arriving** (probability 0.3): a message from a contact shows as a heads-up banner over the top of
  the screen for about five seconds (two observations at B-MoCA's 3 s a step), and its icon stays in the status bar.
  Tapping the banner opens the app; swiping it up dismisses it.
- **Where a list was left** (probability 0.5): Settings' main list opens scrolled by up to 96dp, as a list does
  that was scrolled the last time the app was open.
- **A slow app start** (probability 0.3): the first app opened in the episode shows its starting window (its
  background and icon) for one step before its first screen; an action on it does nothing.
- **A permission prompt** (probability 0.2): the first app opened in the episode that asks for a runtime permission
  (Camera, Contacts, Phone, Photos) shows Android 10's prompt over its first screen ("Allow Camera to take pictures
  and record video?", Allow / Deny, in the phone's language); Allow, Deny or BACK closes it.

Off by default, so that the B-MoCA protocol's episodes are the same every time (docs/environment.md). Messages are
user content, which a phone shows as it was written in any language.
"""

from __future__ import annotations

import random
from typing import Any

from vlui.sim.protocol import Phone

NOTIFICATION_P = 0.3
SCROLL_P = 0.5
SLOW_START_P = 0.3
PERMISSION_P = 0.2
MAX_CLOCK_MINUTES = 59
MAX_SCROLL_DP = 96
HEADSUP_MS = 5000  # how long a heads-up notification stays (Android 10's default minimum display time is 5 s)
# A message arrives in one of these apps, from one of these people
MESSAGING_APPS = ("messages", "gmail")
SENDERS = ("Alex Kim", "Maria Silva", "Sam Okafor", "Yuki Tanaka", "Omar Haddad", "Priya Nair")
TEXTS = ("On my way", "See you at 7?", "👍", "Call me when you can", "Thanks!", "Running 10 min late")


def perturb(dev: Phone, seed: int) -> dict[str, Any]:
    """Apply this episode's randomness to ``dev`` (just loaded and put in the task's starting state); returns what
    was drawn."""
    rng = random.Random(f"vlui-stochastic:{seed}")
    st = dev.state
    drawn: dict[str, Any] = {}
    minutes = rng.randint(0, MAX_CLOCK_MINUTES)
    st.time_ms += minutes * 60_000
    drawn["clock_minutes"] = minutes
    if rng.random() < NOTIFICATION_P:
        app = rng.choice(MESSAGING_APPS)
        st.headsup = {"app": app, "title": rng.choice(SENDERS), "text": rng.choice(TEXTS),
                      "until_ms": st.time_ms + HEADSUP_MS}
        st.notifications = [a for a in st.notifications if a != app] + [app]
        drawn["notification"] = app
    if rng.random() < SCROLL_P:
        scroll = round(rng.uniform(0, MAX_SCROLL_DP) * dev.snapshot.dpi / 160)
        st.scroll["settings.main"] = scroll
        drawn["settings_scroll_px"] = scroll
    if rng.random() < SLOW_START_P:
        st.slow_start = True
        drawn["slow_start"] = True
    if rng.random() < PERMISSION_P:
        st.permission_prompt = True
        drawn["permission_prompt"] = True
    dev.state_changed()
    return drawn
