"""Running an agent in an environment for one episode, and recording it as dataset rows."""

from __future__ import annotations

from typing import Any

from vlui.data.format import encode_png
from vlui.env.env import PhoneEnv


def run_episode(env: PhoneEnv, agent, task: str, snapshot: str, seed: int, episode_id: int = 0,
                save_xml: bool = False, save_full_screen: bool = False) -> list[dict[str, Any]]:
    """Roll ``agent`` out on ``task`` from ``snapshot``; one row per step plus the final observation."""
    obs, info = env.reset(seed=seed, options={"task": task, "snapshot": snapshot})
    agent.reset(env.task, info, seed=seed)
    rows: list[dict[str, Any]] = []
    base = {"episode_id": episode_id, "task_id": task, "snapshot_id": str(snapshot), "seed": seed,
            "instruction": env.task.instruction}

    def observation_row(obs: dict[str, Any], step: int) -> dict[str, Any]:
        return {**base, "step": step, "screen": encode_png(obs["screen"]),
                "screen_full": encode_png(env.device.screenshot()) if save_full_screen else None,
                "xml": obs.get("xml") if save_xml else None}

    step = 0
    while True:
        row = observation_row(obs, step)
        action = agent.act(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        parsed = info["parsed_action"]
        row.update(action=[float(v) for v in action], action_kind=parsed["kind"], action_key=parsed["key"] or None,
                   touch=parsed["touch"], lift=parsed["lift"], reward=float(reward), done=terminated or truncated,
                   terminated=terminated, truncated=truncated, is_last=False)
        rows.append(row)
        step += 1
        if terminated or truncated:
            break
    final = observation_row(obs, step)
    final.update(action=None, action_kind=None, action_key=None, touch=None, lift=None, reward=0.0, done=True,
                 terminated=terminated, truncated=truncated, is_last=True)
    rows.append(final)
    for r in rows:
        r["success"] = bool(terminated)
    return rows
