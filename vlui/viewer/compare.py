"""What the viewer shows of one or more folders (``python -m vlui.viewer A [B ...]``): their episodes, by agent, and
the episodes of the same task on the same phone matched across agents, so that two agents' tries sit side by side.

An agent is a folder's (a dataset's, an evaluation's), or one policy of an evaluation of several checkpoints. The
episodes of a task on a phone are matched in order: each agent's first with the others' first (an evaluation's
run 0 with run 0), its second with their second, and so on. docs/viewer.md.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from vlui.errors import VluiError
from vlui.viewer.episodes import EvaluationFolder, Folder, open_folder


def agents_of(name: str, episodes: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """The agents whose episodes a folder's listing holds, each as its name and its episodes' ids in order (a
    dataset's by id, an evaluation's by run and episode): one agent named ``name``, or one per policy (``<name>:
    <group> <checkpoint>``) of an evaluation of several. Unreadable lines (no task) belong to none."""
    policies: defaultdict[str | None, list[dict[str, Any]]] = defaultdict(list)
    for e in episodes:
        if e["task"] != "?":
            policies[e.get("policy")].append(e)

    def order(e: dict[str, Any]) -> tuple[int, ...]:
        return tuple(v if isinstance(v, int) else -1 for v in (e.get("run"), e.get("episode")))

    return [(name if policy is None or len(policies) == 1 else f"{name}: {policy}",
             [e["id"] for e in sorted(policies[policy], key=order)]) for policy in policies]


class Viewer:
    """The folders a viewer serves, each known by its place in the command (``source``)."""

    def __init__(self, folders: list[Folder]) -> None:
        self.folders = folders
        for i, folder in enumerate(folders):
            folder.base = f"/{i}"

    @classmethod
    def of(cls, paths: list[str | Path]) -> Viewer:
        """The viewer of the datasets and evaluations at ``paths`` (a :class:`VluiError` for one that is neither,
        or one named twice)."""
        folders = [open_folder(p) for p in paths]
        seen = [f.path.resolve() for f in folders]
        twice = next((f.path for f, p in zip(folders, seen, strict=True) if seen.count(p) > 1), None)
        if twice is not None:
            raise VluiError(f"{twice} is named twice: give each dataset or evaluation once")
        return cls(folders)

    def listing(self) -> dict[str, Any]:
        """The folders' title and notes, the agents (``name``, ``source``), every episode's summary (with its
        ``source`` and ``agent``) and the matches: per task, phone and order (``n``), each agent's episode or None."""
        listings = [f.listing() for f in self.folders]
        held = [agents_of(f.path.name, x["episodes"]) for f, x in zip(self.folders, listings, strict=True)]
        named = [name for found in held for name, _ in found]
        agents: list[dict[str, Any]] = []
        episodes: list[dict[str, Any]] = []
        matches: dict[tuple[str, str, int], list[dict[str, Any] | None]] = {}
        for source, (folder, listing) in enumerate(zip(self.folders, listings, strict=True)):
            by_id = {e["id"]: e for e in listing["episodes"]}
            agent_of: dict[str, int] = {}
            for name, ids in held[source]:
                a = len(agents)
                if named.count(name) > 1:  # two folders of the same name: their paths tell them apart
                    name = str(folder.path) + name[len(folder.path.name):]
                agents.append({"name": name, "source": source})
                order: Counter[tuple[str, str]] = Counter()
                for eid in ids:
                    e = by_id[eid]
                    pair = (e["task"], e["snapshot"])
                    slot = matches.setdefault((*pair, order[pair]), [])
                    order[pair] += 1
                    slot.extend([None] * (a + 1 - len(slot)))
                    slot[a] = {"source": source, "id": eid, "success": e["success"], "steps": e["steps"],
                               "problem": e["problem"]}
                    agent_of[eid] = a
            episodes += [{**e, "source": source, "agent": agent_of.get(e["id"])} for e in listing["episodes"]]
        rows = [{"id": f"{task}/{snapshot}/{n}", "task": task, "snapshot": snapshot, "n": n,
                 "episodes": slot + [None] * (len(agents) - len(slot))}
                for (task, snapshot, n), slot in matches.items()]
        if len(self.folders) == 1:
            title, notes = listings[0]["title"], listings[0]["notes"] + self.compared_notes()
        else:
            title = f"{len(agents)} agents compared: " + ", ".join(a["name"] for a in agents)
            notes = [f"{f.path.name}: {n}" for f, x in zip(self.folders, listings, strict=True) for n in x["notes"]]
            notes += self.compared_notes()
        return {"title": title, "notes": notes, "sources": [{"path": str(f.path), "kind": f.kind}
                                                             for f in self.folders],
                "agents": agents, "episodes": episodes, "matches": rows}

    def compared_notes(self) -> list[str]:
        """For each evaluation that ``compare=`` set beside one of these when it ran, and that is not viewed here, how
        to view the two side by side."""
        viewed = {f.path.resolve() for f in self.folders}
        notes = []
        for folder in self.folders:
            for name, path in (folder.compared() if isinstance(folder, EvaluationFolder) else {}).items():
                if path.resolve() in viewed:
                    continue
                if (path / "episodes.jsonl").is_file():
                    shown = " ".join(str(f.path) for f in self.folders)
                    notes.append(f"{folder.path.name} was compared with {name} ({path}) when it was evaluated: "
                                 f"python -m vlui.viewer {shown} {path} shows their episodes side by side")
                else:
                    notes.append(f"{folder.path.name} was compared with {name} ({path}) when it was evaluated; its "
                                 "episodes are not there to show beside it")
        return notes

    def episode(self, source: int, eid: str) -> dict[str, Any] | None:
        """One episode of the ``source``-th folder, None when there is no such folder or episode."""
        return self.folders[source].episode(eid) if 0 <= source < len(self.folders) else None
