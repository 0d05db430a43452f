"""Write ``vlui/tasks/data/bmoca25_home.yaml``: B-MoCA release 2.5's home screens, read from a B-MoCA repository.

    python tests/reference/make_bmoca25_home.py PATH [--rev REV] [--out FILE]

PATH is a clone of gimme1dollar/b-moca (a work tree, or a bare or mirror git directory, read at ``--rev``, default
HEAD). The release's set-up (``asset/environments/set_up.py``, ``EnvBuilder.build_environments``) builds snapshot
``<mode>_env_<idx>`` for each row of ``config/environments_<mode>.csv`` and pushes
``resource/home_screen_db/<mode>_env_<idx>.db`` as the launcher's database (``script/set_home_screen.sh``): one
database per snapshot, whose ``favorites`` table holds its home screen. vlui's snapshot of the same index (``envs/000``
for ``train_env_000``, ``envs/100`` for ``test_env_100``) takes it. The file keeps, per snapshot, the hotseat by slot
and the first page's icons by cell, each app by vlui's key (the icon's title, as the English label of vlui's app), and
once per app the component its intent starts. Anything else in a database (a widget, a folder, a second page, an
icon spanning cells) stops the script with the database's name: the release's have none.
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_bmoca25 import Repo, read_args  # noqa: E402  (the script beside this one reads the same clones)

from vlui.android.apps import apps  # noqa: E402
from vlui.android.i18n import get_locale  # noqa: E402

DBS = "asset/environments/resource/home_screen_db/"
OUT = Path(__file__).resolve().parents[2] / "vlui" / "tasks" / "data" / "bmoca25_home.yaml"
DESKTOP, HOTSEAT = -100, -101  # Launcher3's LauncherSettings.Favorites.CONTAINER_*
COLUMNS = ROWS = HOTSEAT_SLOTS = 5  # the grid of the release's launcher databases (cellX, cellY and slots 0-4)


def read_bytes(repo: Repo, path: str) -> bytes:
    return (repo.path / path).read_bytes() if repo.tree else repo._git("show", f"{repo.rev}:{path}")


def favorites(data: bytes, name: str) -> list[tuple]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / name
        db.write_bytes(data)
        con = sqlite3.connect(db)
        try:
            return con.execute("SELECT title, intent, container, screen, cellX, cellY, spanX, spanY, itemType "
                               "FROM favorites ORDER BY container DESC, screen, cellY, cellX").fetchall()
        finally:
            con.close()


def component(intent: str) -> str:
    return next(part[len("component="):] for part in intent.split(";") if part.startswith("component="))


def main(argv: list[str] | None = None) -> None:
    repo, out_path = read_args(__doc__, OUT, argv)
    english = get_locale("en-US")
    labels = {english.t(f"app.{key}"): key for key in apps()}
    components: dict[str, str] = {}
    phones: dict[str, dict] = {}
    for path in repo.files(DBS):
        name = path[len(DBS):]
        index = name.removesuffix(".db").rsplit("_", 1)[1]
        hotseat: list[str | None] = [None] * HOTSEAT_SLOTS
        workspace = []
        for title, intent, container, screen, x, y, span_x, span_y, item_type in favorites(read_bytes(repo, path),
                                                                                          name):
            if item_type != 0 or (span_x, span_y) != (1, 1) or title not in labels:
                sys.exit(f"{name}: {title!r} is not a one-cell app icon of an app vlui knows")
            key = labels[title]
            if components.setdefault(key, component(intent)) != component(intent):
                sys.exit(f"{name}: {title} starts {component(intent)}, elsewhere {components[key]}")
            if container == HOTSEAT and 0 <= screen < HOTSEAT_SLOTS:
                hotseat[screen] = key
            elif container == DESKTOP and screen == 0 and 0 <= x < COLUMNS and 0 <= y < ROWS:
                workspace.append([key, y, x])
            else:
                sys.exit(f"{name}: {title} is not in the hotseat or on the first page's {COLUMNS}x{ROWS} grid")
        phones[index] = {"db": name, "hotseat": hotseat, "workspace": workspace}
    out = {
        "source": f"gimme1dollar/b-moca@{repo.commit}: {DBS}<mode>_env_<idx>.db, table favorites "
                  "(written by tests/reference/make_bmoca25_home.py)",
        "grid": {"columns": COLUMNS, "rows": ROWS, "hotseat": HOTSEAT_SLOTS},
        "components": dict(sorted(components.items())),
        "phones": dict(sorted(phones.items())),
    }
    text = "".join(yaml.safe_dump({key: value}, sort_keys=False, width=120, default_flow_style=flow)
                   for (key, value), flow in zip(out.items(), (False, None, False, None), strict=True))
    out_path.write_text(
        "# B-MoCA release 2.5's home screens, one per snapshot: the launcher database its set-up pushes to the\n"
        "# snapshot of that index (docs/environment.md, \"The release's phones\"). hotseat: the apps by slot (null: an\n"
        "# empty slot); workspace: [app, row, column] on the first page (Launcher3's cellY, cellX; row 0 holds the\n"
        "# At a glance widget); components: what each app's icon starts on the release's phones.\n" + text,
        encoding="utf-8")
    print(f"{out_path}: {len(phones)} home screens from {out['source'].split(':')[0]}")


if __name__ == "__main__":
    main()
