"""Training data: a collected dataset decoded once into uint8 tensors, batched by index.

Every screen PNG is decoded a single time at setup and kept as one ``(N, H, W, 3)`` uint8 tensor (on the GPU when
there is one, ``data.on_device`` is set and it fits); a batch is a gather from it, never a decode. Rows are split
into train and validation by episode. Samples are transitions ``(o, a, r, o', done, instruction)``: BC uses the
first two, IQL all of them.

Batches come from :class:`EpochBatches`, whose order depends only on the seed and the epoch number: an epoch is
``steps_per_epoch`` steps and checkpoints are written at epoch ends, so a run that is killed and resumed from its
last checkpoint sees exactly the batches the uninterrupted run would have.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import lightning as L
import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Sampler

from vlui.data.format import decode_png, episode_path, read_dataset
from vlui.errors import VluiError


@dataclass
class _Part:
    """One dataset of a mix, as read from disk."""

    path: Path
    info: dict
    table: object  # pyarrow.Table


@dataclass
class Transitions:
    """Index arrays over the frame tensor, one entry per sample (length M)."""

    obs: torch.Tensor  # (M,) int64 row of o
    next_obs: torch.Tensor  # (M,) int64 row of o'
    actions: torch.Tensor  # (M, 4) float32
    rewards: torch.Tensor  # (M,) float32
    dones: torch.Tensor  # (M,) float32, 1 where the task succeeded with the action (not where time ran out)
    instruction: torch.Tensor  # (M,) int64 index into the instruction list
    previous: torch.Tensor  # (M, 4) float32, the action taken before o in its episode (NaN at the first step)
    acted: torch.Tensor  # (M, 4) float32, the action taken at o (a DAgger round's policy's, not the label)

    def __len__(self) -> int:
        return len(self.obs)

    def to(self, device) -> Transitions:
        return Transitions(*(getattr(self, f).to(device) for f in self.__dataclass_fields__))


class EpochBatches(Sampler[list[int]]):
    """``steps_per_epoch`` batches of ``batch_size`` indices into ``n`` samples; the order is a function of
    ``(seed, epoch)`` alone. Under DDP each rank takes its own slice of every batch."""

    def __init__(self, n: int, batch_size: int, steps_per_epoch: int, seed: int, rank: int = 0, world: int = 1):
        self.n, self.batch_size, self.steps, self.seed = n, batch_size, steps_per_epoch, seed
        self.rank, self.world = rank, world
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.steps

    def __iter__(self):
        g = torch.Generator().manual_seed(self.seed * 100_003 + self.epoch)
        need = self.steps * self.batch_size * self.world
        order = torch.cat([torch.randperm(self.n, generator=g) for _ in range(-(-need // self.n))])[:need]
        per_rank = self.batch_size
        for step in range(self.steps):
            start = (step * self.world + self.rank) * per_rank
            yield order[start:start + per_rank].tolist()


class DemoDataModule(L.LightningDataModule):
    """Batches of one dataset, or of several trained on together (``mix``: e.g. DAgger's relabelled rounds)."""

    def __init__(self, path: str, batch_size: int = 64, val_fraction: float = 0.1, image_height: int = 256,
                 image_width: int = 128, on_device: bool = True, steps_per_epoch: int = 500, seed: int = 0,
                 val_batches: int = 8, mix: list[str] | tuple[str, ...] = (), success_only: bool = False) -> None:
        super().__init__()
        self.path = Path(path)
        self.paths = [self.path, *(Path(p) for p in mix)]
        self.success_only = success_only
        self.batch_size, self.val_fraction = batch_size, val_fraction
        self.image_size = (image_height, image_width)
        self.on_device, self.steps_per_epoch, self.seed, self.val_batches = on_device, steps_per_epoch, seed, \
            val_batches
        self.frames: torch.Tensor | None = None
        self.parts: list[tuple[str, int]] = []
        self.instructions: list[str] = []
        self.train_set: Transitions | None = None
        self.val_set: Transitions | None = None

    # ------------------------------------------------------------------------------------------------ loading
    def setup(self, stage: str | None = None) -> None:
        if self.frames is not None:
            return
        parts = [_Part(path, *read_dataset(path)) for path in self.paths]
        self.instructions = sorted({s for part in parts for s in part.table.column("instruction").to_pylist()})
        frames, samples, episodes, offset = [], [], [], 0
        for n, part in enumerate(parts):
            frames.append(self._decode(part))
            rows, episode = self._samples(part)
            samples.append(Transitions(rows.obs + offset, rows.next_obs + offset, *[
                getattr(rows, f) for f in ("actions", "rewards", "dones", "instruction", "previous", "acted")]))
            episodes.append(np.stack([np.full(len(episode), n), episode], axis=1))
            offset += part.table.num_rows
        self.frames = torch.from_numpy(np.concatenate(frames))
        self.parts = [(str(part.path.resolve()), len(f)) for part, f in zip(parts, frames)]  # frames of each, in order
        all_samples = Transitions(*(torch.cat([getattr(s, f) for s in samples]) for f in Transitions.__dataclass_fields__))
        episode = np.concatenate(episodes)  # (dataset, episode id) of every sample
        # split by episode, so no episode is in both sets
        keys = np.unique(episode, axis=0)
        rng = np.random.default_rng(self.seed)
        n_val = int(round(len(keys) * self.val_fraction))
        n_val = min(max(n_val, 1 if self.val_fraction > 0 and len(keys) > 1 else 0), max(len(keys) - 1, 0))
        val_keys = {tuple(k) for k in keys[rng.permutation(len(keys))[:n_val]].tolist()}
        in_val = torch.from_numpy(np.array([tuple(k) in val_keys for k in episode.tolist()], dtype=bool))
        self.train_set = _select(all_samples, ~in_val)
        self.val_set = _select(all_samples, in_val)
        if len(self.train_set) == 0:
            kept = " with data.success_only=true (no successful episodes?)" if self.success_only else ""
            raise VluiError(f"{', '.join(map(str, self.paths))} has no training samples{kept} (episodes: {len(keys)}); "
                            "collect more episodes")
        if self.on_device and torch.cuda.is_available():
            free, _ = torch.cuda.mem_get_info()
            if self.frames.numel() < 0.5 * free:  # leave room for the model
                self.frames = self.frames.cuda()
                self.train_set, self.val_set = self.train_set.to("cuda"), self.val_set.to("cuda")

    def _decode(self, part: _Part) -> np.ndarray:
        """Every screen of a dataset, ``(rows, H, W, 3)`` uint8 at the training resolution."""
        h, w = self.image_size
        stored = (part.info["image"]["height"], part.info["image"]["width"])

        def decode(row: int, data: bytes | None) -> np.ndarray:
            img = _screen(data, stored, part.path, part.table, row)
            if stored != (h, w):
                img = np.asarray(Image.fromarray(img).resize((w, h), Image.BILINEAR))
            return img

        with ThreadPoolExecutor(max_workers=4) as pool:  # PNG decoding releases the GIL
            return np.stack(list(pool.map(decode, range(part.table.num_rows), part.table.column("screen").to_pylist())))

    def _samples(self, part: _Part) -> tuple[Transitions, np.ndarray]:
        """A dataset's transitions (row indices local to it) and each one's episode id.

        ``dones`` is 1 only where the task succeeded (``terminated``): an episode cut off by the step limit is not
        over for the task, so its last value bootstraps. With ``success_only``, the transitions of failed episodes
        are left out, except in a DAgger dataset, whose actions are the expert's labels whatever the policy did."""
        table = part.table
        episode = table.column("episode_id").to_numpy()
        keep = ~table.column("is_last").to_numpy(zero_copy_only=False)  # every row with an action; its next is o'
        if self.success_only and not part.info["recipe"].get("relabelled_by"):
            keep &= table.column("success").to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(keep)
        index = {s: i for i, s in enumerate(self.instructions)}
        instructions = table.column("instruction").to_pylist()
        actions = _actions(table)
        acted = _actions(table, "acted")  # set where the row's action is a label the agent did not act on
        acted = np.where(np.isnan(acted).all(axis=1, keepdims=True), actions, acted)
        first = table.column("step").to_numpy() == 0
        previous = np.where(first[rows, None], np.nan, acted[np.maximum(rows - 1, 0)]).astype(np.float32)
        samples = Transitions(
            obs=torch.from_numpy(rows),
            next_obs=torch.from_numpy(rows + 1),
            actions=torch.from_numpy(actions[rows]),
            rewards=torch.from_numpy(table.column("reward").to_numpy()[rows].astype(np.float32)),
            dones=torch.from_numpy(table.column("terminated").to_numpy(zero_copy_only=False)[rows].astype(np.float32)),
            instruction=torch.tensor([index[instructions[r]] for r in rows], dtype=torch.int64),
            previous=torch.from_numpy(previous),
            acted=torch.from_numpy(acted[rows]),
        )
        return samples, episode[rows]

    # ------------------------------------------------------------------------------------------------ batches
    def batch(self, samples: Transitions, idx: torch.Tensor, next_obs: bool = True) -> dict[str, torch.Tensor]:
        idx = idx.to(samples.obs.device)
        obs, nxt = samples.obs[idx], samples.next_obs[idx]
        out = {"images": self.frames[obs.to(self.frames.device)], "frame": obs, "actions": samples.actions[idx],
               "rewards": samples.rewards[idx], "dones": samples.dones[idx], "instruction": samples.instruction[idx],
               "previous": samples.previous[idx]}
        if next_obs:
            out["next_images"], out["next_frame"] = self.frames[nxt.to(self.frames.device)], nxt
            out["next_previous"] = samples.acted[idx]  # o' was reached by the action taken at o
        return out

    def train_dataloader(self) -> DataLoader:
        trainer = self.trainer
        rank, world = (trainer.global_rank, trainer.world_size) if trainer is not None else (0, 1)
        sampler = EpochBatches(len(self.train_set), self.batch_size, self.steps_per_epoch, self.seed, rank, world)
        return DataLoader(range(len(self.train_set)), batch_sampler=sampler,
                          collate_fn=lambda idx: self.batch(self.train_set, torch.tensor(idx)))

    def val_dataloader(self) -> DataLoader:
        n = len(self.val_set)
        if n == 0:
            return DataLoader([])
        chunks = [list(range(i, min(i + self.batch_size, n))) for i in range(0, n, self.batch_size)]
        return DataLoader(chunks[: self.val_batches], batch_size=None,
                          collate_fn=lambda idx: self.batch(self.val_set, torch.tensor(idx)))


def _screen(data: bytes | None, size: tuple[int, int], root: Path, table, row: int) -> np.ndarray:
    """Row ``row``'s screen as ``(H, W, 3)`` uint8, checked against the dataset's image size; a damaged one is a
    one-line error naming its episode, step and file, which collect.py writes again once deleted."""
    problem = None
    try:
        img = decode_png(data) if data else None
        if img is None:
            problem = "is missing"
        elif img.shape[:2] != size:
            problem = f"is {img.shape[0]}x{img.shape[1]}, the dataset's screens are {size[0]}x{size[1]}"
    except Exception as err:  # noqa: BLE001 - PIL raises many types for a damaged PNG
        problem = f"is not a readable PNG ({type(err).__name__})"
    if problem is None:
        return img
    eid, step = table.column("episode_id")[row].as_py(), table.column("step")[row].as_py()
    raise VluiError(f"{root}: the screen of episode {eid} step {step} {problem}: delete "
                    f"{episode_path(root, eid).relative_to(root)} and run the same collect.py command again to "
                    "collect that episode again")


def _actions(table, column: str = "action") -> np.ndarray:
    """An action column as ``(rows, 4)`` float32, NaN where it is null (the final-observation rows)."""
    out = np.full((table.num_rows, 4), np.nan, dtype=np.float32)
    for i, a in enumerate(table.column(column).to_pylist()):
        if a is not None:
            out[i] = a
    return out


def _select(s: Transitions, mask: torch.Tensor) -> Transitions:
    return Transitions(*(getattr(s, f)[mask] for f in s.__dataclass_fields__))
