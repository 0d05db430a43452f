"""Training data: a collected dataset decoded once into uint8 tensors, batched by index.

Every distinct screen PNG is decoded a single time at setup and kept as one ``(F, H, W, 3)`` uint8 tensor (on the GPU
when there is one, ``data.on_device`` is set and it fits); a batch is a gather from it, never a decode. A screen that
recurs (a phone's home screen starts each of its tasks; the quickstart's 18,254 rows hold 12,980 distinct screens) is
one frame, which the rows share (``frame_of``), and so one cached feature map with a frozen backbone. Rows are split
into train and validation by episode. Samples are transitions ``(o, a, r, o', done, instruction)``: BC uses the
first two, IQL all of them.

For a policy with memory (``history`` = K, ``model.history``), each sample also carries its episode's last K steps
before ``o``, most recent first: their frames, the actions taken there and whether each exists (an
episode's first steps have fewer than K before them; a window never reaches into another episode). They are index
arrays built from the episode and step columns at setup: no screen is stored or decoded twice, and with a frozen
backbone the past screens' features are the cached features of those frames.

Batches come from :class:`EpochBatches`, whose order depends only on the seed and the epoch number: an epoch is
``steps_per_epoch`` steps and checkpoints are written at epoch ends, so a run that is killed and resumed from its
last checkpoint sees exactly the batches the uninterrupted run would have.

With grounding (``data.grounding``, docs/training.md), each training batch also carries, under ``"grounding"``, a
batch of :class:`Grounding` examples: a stored screen of the training episodes, the label of one of its clickable
elements as the instruction, and the tap at that element as the action. They come from the UI trees the dataset
stores (collected with ``save_xml=true``) through the function the caller passes, and reuse the screens' frames (and
so their cached features): only the text differs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import lightning as L
import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Sampler

from vlui.data.format import check_observations, dataset_spec, decode_png, episode_path, read_dataset
from vlui.data.training import TrainingData
from vlui.errors import VluiError
from vlui.seeding import WIDTH

log = logging.getLogger(__name__)

# a screen's UI tree (a uiautomator dump) -> its (label, tap action) grounding pairs (vlui.env.grounding)
PairsOf = Callable[[str], Sequence[tuple[str, np.ndarray]]]
GROUNDING_SEED = WIDTH  # added to the seed for the grounding examples' draw and order: a stream of their own


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
    acted: torch.Tensor  # (M, 4) float32, the action taken at o (a DAgger round's policy's, not the label)
    past: torch.Tensor  # (M, K) int64 rows of the K steps before o in its episode, most recent first (o's own: none)
    past_actions: torch.Tensor  # (M, K, 4) float32, the action taken at each (NaN where there is none)
    past_valid: torch.Tensor  # (M, K) bool, whether the episode has that step

    def __len__(self) -> int:
        return len(self.obs)

    def to(self, device) -> Transitions:
        return Transitions(*(getattr(self, f).to(device) for f in self.__dataclass_fields__))


@dataclass
class Grounding:
    """Grounding examples, one entry each (length G): a screen, the label of one of its elements, the tap at it."""

    frame: torch.Tensor  # (G,) int64 row of the screen (its frame is ``frame_of[row]``)
    label: torch.Tensor  # (G,) int64 index into the label list
    actions: torch.Tensor  # (G, 4) float32, the tap at the element's centre

    def __len__(self) -> int:
        return len(self.frame)

    def to(self, device) -> Grounding:
        return Grounding(*(getattr(self, f).to(device) for f in self.__dataclass_fields__))


class EpochBatches(Sampler[list[int]]):
    """``steps_per_epoch`` batches of ``batch_size`` indices into ``n`` samples; the order is a function of
    ``(seed, epoch)`` alone. Under DDP each rank takes its own slice of every batch.

    Without ``weights``, every sample once per pass (passes of shuffled samples, one after another); with ``weights``
    (``n`` non-negative numbers), each index drawn independently with probability proportional to its weight."""

    def __init__(self, n: int, batch_size: int, steps_per_epoch: int, seed: int, rank: int = 0, world: int = 1,
                 weights: torch.Tensor | None = None):
        self.n, self.batch_size, self.steps, self.seed = n, batch_size, steps_per_epoch, seed
        self.rank, self.world = rank, world
        self.epoch = 0
        if weights is not None and (weights.shape != (n,) or not torch.isfinite(weights).all() or (weights < 0).any()
                                    or not weights.sum() > 0):
            raise VluiError(f"sample weights are {n} finite numbers >= 0, not all 0 (got shape {tuple(weights.shape)})")
        self.weights = None if weights is None else weights.double()

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.steps

    def __iter__(self):
        g = torch.Generator().manual_seed(self.seed * 100_003 + self.epoch)
        need = self.steps * self.batch_size * self.world
        if self.weights is not None:
            order = torch.multinomial(self.weights, need, replacement=True, generator=g)
        else:
            order = torch.cat([torch.randperm(self.n, generator=g) for _ in range(-(-need // self.n))])[:need]
        per_rank = self.batch_size
        for step in range(self.steps):
            start = (step * self.world + self.rank) * per_rank
            yield order[start:start + per_rank].tolist()


def balanced_weights(snapshots: Sequence[str], group_of: Callable[[str], str]) -> tuple[torch.Tensor, dict[str, int]]:
    """Each sample's weight (its snapshot's group drawn as often as every other group, its samples alike within it)
    and each group's number of samples, largest first; ``group_of`` is asked once per snapshot."""
    of = {s: group_of(s) for s in dict.fromkeys(snapshots)}
    groups: dict[str, int] = {}
    for s in snapshots:
        groups[of[s]] = groups.get(of[s], 0) + 1
    weights = torch.tensor([1.0 / groups[of[s]] for s in snapshots], dtype=torch.float64)
    return weights, dict(sorted(groups.items(), key=lambda kv: -kv[1]))


class WithGrounding(Sampler[list[int]]):
    """Each step's batch of ``samples`` followed by its batch of ``grounding`` examples, numbered after the ``n``
    samples (example ``i`` is ``n + i``); both orders are functions of the seed and the epoch."""

    def __init__(self, samples: EpochBatches, grounding: EpochBatches, n: int) -> None:
        self.samples, self.grounding, self.n = samples, grounding, n

    def set_epoch(self, epoch: int) -> None:
        self.samples.set_epoch(epoch)
        self.grounding.set_epoch(epoch)

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self):
        for batch, examples in zip(self.samples, self.grounding, strict=False):
            yield batch + [self.n + i for i in examples]


class DemoDataModule(L.LightningDataModule):
    """Batches of one dataset, or of several trained on together (``mix``: e.g. DAgger's relabelled rounds).

    ``grounding`` (a screen's UI tree -> its ``(label, tap)`` pairs) adds grounding examples to every training batch:
    up to ``grounding_per_screen`` pairs of each screen of the training episodes, drawn with the seed. Every dataset
    must then hold its screens' UI trees.

    ``observation_version`` (vlui.device.OBSERVATION_VERSION, as training passes it) refuses screens that the
    simulated phone drew under another definition of the observation.

    ``split_episodes`` (the training and validation episode ids of the first dataset: a named split,
    vlui/data/splits.py) replaces the random ``val_fraction`` split: the first dataset's other episodes (the split's
    held-out ones) are left out, and the other datasets' episodes are all for training.

    ``history`` (``model.history``: K) gives every sample its episode's last K steps (:func:`past_windows`); a batch
    holds them as ``past_frame``, ``past_actions`` and ``past_valid`` (those of o' as ``next_past_*``).

    ``group_of`` (a snapshot id -> its group, e.g. ``phone`` or ``tablet``) balances the training batches over the
    groups: each group is drawn equally often, and within a group each sample equally often (``data.balance``);
    :attr:`groups` says how many training samples each group has."""

    def __init__(self, path: str, batch_size: int = 64, val_fraction: float = 0.1, image_height: int = 256,
                 image_width: int = 128, on_device: bool = True, steps_per_epoch: int = 500, seed: int = 0,
                 val_batches: int = 8, mix: list[str] | tuple[str, ...] = (), success_only: bool = False,
                 grounding: PairsOf | None = None, grounding_per_screen: int = 4,
                 observation_version: int | None = None,
                 split_episodes: tuple[Collection[int], Collection[int]] | None = None, history: int = 0,
                 group_of: Callable[[str], str] | None = None) -> None:
        super().__init__()
        self.group_of = group_of
        self.sample_weights: torch.Tensor | None = None
        self.groups: dict[str, int] = {}  # with group_of: each group's training samples
        self.split_episodes = split_episodes
        if isinstance(history, bool) or not isinstance(history, int) or history < 0:
            raise VluiError(f"history is a number of past steps (0 or more), not {history!r}")
        self.history = history
        self.observation_version = observation_version
        self.path = Path(path)
        self.paths = [self.path, *(Path(p) for p in mix)]
        self.success_only = success_only
        self.batch_size, self.val_fraction = batch_size, val_fraction
        self.image_size = (image_height, image_width)
        self.on_device, self.steps_per_epoch, self.seed, self.val_batches = on_device, steps_per_epoch, seed, \
            val_batches
        self.frames: torch.Tensor | None = None  # (F, H, W, 3) uint8: each distinct screen once
        self.frame_of: torch.Tensor | None = None  # (rows,) int64: each row's screen's frame
        self.parts: list[tuple[str, int]] = []
        self.instructions: list[str] = []
        self.train_set: Transitions | None = None
        self.val_set: Transitions | None = None
        self.grounding, self.grounding_per_screen = grounding, grounding_per_screen
        self.labels: list[str] = []  # the grounding examples' labels (their instructions), indexed by Grounding.label
        self.grounding_set: Grounding | None = None
        self.training: TrainingData | None = None  # what it was made of (:meth:`of`), for DAgger and the export

    @classmethod
    def of(cls, data: TrainingData, seed: int, history: int = 0, extra: Sequence[str] = (),
           steps_per_epoch: int | None = None, grounding: PairsOf | None = None,
           group_of: Callable[[str], str] | None = None, observation_version: int | None = None) -> DemoDataModule:
        """The batches of ``data`` (its dataset, the train and val parts of its split, its mix) at its ``spec``'s
        screen size, with the ``extra`` datasets (DAgger's rounds) trained on too, as its settings (``data.*``) say;
        ``steps_per_epoch`` overrides theirs."""
        s = data.settings
        module = cls(str(data.path), batch_size=s.batch_size, val_fraction=s.val_fraction,
                     image_height=data.spec.height, image_width=data.spec.width, on_device=s.on_device,
                     steps_per_epoch=steps_per_epoch or s.steps_per_epoch, seed=seed, mix=[*data.mix, *extra],
                     success_only=s.success_only, grounding=grounding, grounding_per_screen=s.grounding.per_screen,
                     observation_version=observation_version, split_episodes=data.split_episodes, history=history,
                     group_of=group_of)
        module.training = data
        return module

    # ------------------------------------------------------------------------------------------------ loading
    def setup(self, stage: str | None = None) -> None:
        if self.frames is not None:
            return
        parts = [_Part(path, *read_dataset(path)) for path in self.paths]
        if self.observation_version is not None:
            _check_observations(parts, self.observation_version)
        if self.grounding is not None:
            _check_ui_trees(parts)
        self.instructions = sorted({s for part in parts for s in part.table.column("instruction").to_pylist()})
        # every distinct screen decoded once, straight into one array: a dataset's frames are the largest thing
        # training holds, and a phone's screens repeat across its tasks (the home screen starts each of them)
        distinct = [_distinct(part.table.column("screen").to_pylist()) for part in parts]
        frames = np.empty((sum(len(first) for first, _ in distinct), *self.image_size, 3), dtype=np.uint8)
        samples, episodes, frame_of, offset, start = [], [], [], 0, 0
        for n, (part, (first, local)) in enumerate(zip(parts, distinct, strict=True)):
            self._decode(part, first, frames[start:start + len(first)])
            rows, episode = self._samples(part)
            samples.append(replace(rows, obs=rows.obs + offset, next_obs=rows.next_obs + offset, past=rows.past + offset))
            episodes.append(np.stack([np.full(len(episode), n), episode], axis=1))
            frame_of.append(local + start)
            offset += part.table.num_rows
            start += len(first)
        self.frames = torch.from_numpy(frames)
        self.frame_of = torch.from_numpy(np.concatenate(frame_of))
        log.info("%d screens, %d of them distinct, decoded once (%.1f GB)", offset, start, frames.nbytes / 1e9)
        # the frames of each part, in order
        self.parts = [(str(part.path.resolve()), len(first)) for part, (first, _) in zip(parts, distinct, strict=True)]
        all_samples = Transitions(*(torch.cat([getattr(s, f) for s in samples]) for f in Transitions.__dataclass_fields__))
        episode = np.concatenate(episodes)  # (dataset, episode id) of every sample
        # split by episode, so no episode is in both sets
        keys = np.unique(episode, axis=0)
        if self.split_episodes is None:
            rng = np.random.default_rng(self.seed)
            n_val = int(round(len(keys) * self.val_fraction))
            n_val = min(max(n_val, 1 if self.val_fraction > 0 and len(keys) > 1 else 0), max(len(keys) - 1, 0))
            val_keys = {tuple(k) for k in keys[rng.permutation(len(keys))[:n_val]].tolist()}
            train_keys = {tuple(k) for k in keys.tolist()} - val_keys
        else:
            train_ids, val_ids = (set(map(int, ids)) for ids in self.split_episodes)
            val_keys = {(0, e) for e in val_ids}
            train_keys = {tuple(k) for k in keys.tolist() if k[0] > 0 or k[1] in train_ids}
        in_val = torch.from_numpy(np.array([tuple(k) in val_keys for k in episode.tolist()], dtype=bool))
        in_train = torch.from_numpy(np.array([tuple(k) in train_keys for k in episode.tolist()], dtype=bool))
        self.train_set = _select(all_samples, in_train)
        self.val_set = _select(all_samples, in_val)
        if len(self.train_set) == 0:
            kept = " with data.success_only=true (no successful episodes?)" if self.success_only else ""
            raise VluiError(f"{', '.join(map(str, self.paths))} has no training samples{kept} (episodes: {len(keys)}); "
                            "collect more episodes")
        if self.group_of is not None:
            snapshots = [s for part in parts for s in part.table.column("snapshot_id").to_pylist()]  # frame order
            self.sample_weights, self.groups = balanced_weights(
                [snapshots[i] for i in self.train_set.obs.tolist()], self.group_of)
            total = sum(self.groups.values())
            log.info("balanced batches: %d training samples in %d group(s), each drawn as often: %s", total,
                     len(self.groups), ", ".join(f"{g} {n} ({100 * n / total:.0f}%)" for g, n in self.groups.items()))
        if self.grounding is not None:
            self.grounding_set = self._grounding_examples(parts)
        if self.on_device and torch.cuda.is_available():
            free, _ = torch.cuda.mem_get_info()
            if self.frames.numel() < 0.5 * free:  # leave room for the model
                self.frames, self.frame_of = self.frames.cuda(), self.frame_of.cuda()
                self.train_set, self.val_set = self.train_set.to("cuda"), self.val_set.to("cuda")
                if self.grounding_set is not None:
                    self.grounding_set = self.grounding_set.to("cuda")

    def release(self) -> None:
        """Let go of the decoded screens, the largest thing training holds (a DAgger round's data module decodes
        them again with the round's own); :meth:`setup` decodes them again if this one is used after."""
        self.frames = None

    def _decode(self, part: _Part, rows: np.ndarray, out: np.ndarray) -> None:
        """The screens of a dataset's ``rows`` into ``out``, ``(len(rows), H, W, 3)`` uint8 at the training
        resolution."""
        h, w = self.image_size
        stored = dataset_spec(part.info, part.path).image_size
        screens = part.table.column("screen")

        def decode(i: int, row: int) -> None:
            img = _screen(screens[row].as_py(), stored, part.path, part.table, row)
            if stored != (h, w):
                img = np.asarray(Image.fromarray(img).resize((w, h), Image.BILINEAR))
            out[i] = img

        with ThreadPoolExecutor(max_workers=4) as pool:  # PNG decoding releases the GIL
            for _ in pool.map(decode, range(len(rows)), rows.tolist()):
                pass  # raises what a row raised

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
        past, valid = past_windows(episode, table.column("step").to_numpy(), rows, self.history)
        samples = Transitions(
            obs=torch.from_numpy(rows),
            next_obs=torch.from_numpy(rows + 1),
            actions=torch.from_numpy(actions[rows]),
            rewards=torch.from_numpy(table.column("reward").to_numpy()[rows].astype(np.float32)),
            dones=torch.from_numpy(table.column("terminated").to_numpy(zero_copy_only=False)[rows].astype(np.float32)),
            instruction=torch.tensor([index[instructions[r]] for r in rows], dtype=torch.int64),
            acted=torch.from_numpy(acted[rows]),
            past=torch.from_numpy(past),
            past_actions=torch.from_numpy(np.where(valid[..., None], acted[past], np.nan).astype(np.float32)),
            past_valid=torch.from_numpy(valid),
        )
        return samples, episode[rows]

    def _grounding_examples(self, parts: list[_Part]) -> Grounding:
        """Up to ``grounding_per_screen`` (label, tap) pairs of every screen of the training episodes (each row a
        training transition starts or ends at: the validation episodes' screens stay out), drawn with the seed;
        sets :attr:`labels`. A dump seen before (the same screen in another episode) is not parsed again."""
        trees = [tree for part in parts for tree in part.table.column("xml").to_pylist()]  # rows in frame order
        rows = torch.unique(torch.cat([self.train_set.obs, self.train_set.next_obs])).tolist()
        rng = np.random.default_rng([self.seed, GROUNDING_SEED])
        pairs_of: dict[str, Sequence[tuple[str, np.ndarray]]] = {}
        chosen: list[tuple[int, str, np.ndarray]] = []
        for row in rows:
            tree = trees[row]
            if tree not in pairs_of:
                pairs_of[tree] = self.grounding(tree)
            pairs = pairs_of[tree]
            k = min(self.grounding_per_screen, len(pairs))
            chosen += [(row, *pairs[i]) for i in sorted(rng.choice(len(pairs), k, replace=False))]
        if not chosen:
            raise VluiError(f"data.grounding: no screen of {', '.join(map(str, self.paths))} has a labelled clickable "
                            "element to ground: set data.grounding.weight=0")
        self.labels = sorted({label for _, label, _ in chosen})
        index = {label: i for i, label in enumerate(self.labels)}
        return Grounding(frame=torch.tensor([row for row, _, _ in chosen], dtype=torch.int64),
                         label=torch.tensor([index[label] for _, label, _ in chosen], dtype=torch.int64),
                         actions=torch.from_numpy(np.stack([action for _, _, action in chosen]).astype(np.float32)))

    # ------------------------------------------------------------------------------------------------ batches
    def batch(self, samples: Transitions, idx: torch.Tensor, next_obs: bool = True) -> dict[str, torch.Tensor]:
        idx = idx.to(samples.obs.device)
        frame_of = self.frame_of  # rows -> their screens' frames: what images and cached features are indexed by
        obs, nxt = frame_of[samples.obs[idx]], frame_of[samples.next_obs[idx]]
        past, past_actions, past_valid = frame_of[samples.past[idx]], samples.past_actions[idx], samples.past_valid[idx]
        out = {"images": self.frames[obs.to(self.frames.device)], "frame": obs, "actions": samples.actions[idx],
               "rewards": samples.rewards[idx], "dones": samples.dones[idx], "instruction": samples.instruction[idx],
               "past_frame": past, "past_actions": past_actions, "past_valid": past_valid}
        if next_obs:
            out["next_images"], out["next_frame"] = self.frames[nxt.to(self.frames.device)], nxt
            # o' was reached by the action taken at o: o is its most recent past step, o's past follows
            k = self.history
            out["next_past_frame"] = torch.cat([obs[:, None], past], dim=1)[:, :k]
            out["next_past_actions"] = torch.cat([samples.acted[idx][:, None], past_actions], dim=1)[:, :k]
            out["next_past_valid"] = torch.cat([torch.ones_like(past_valid[:, :1]), past_valid], dim=1)[:, :k]
        return out

    def grounding_batch(self, idx: torch.Tensor) -> dict[str, torch.Tensor]:
        """Grounding examples ``idx`` as the inputs a transition's observation has (no action before them) plus
        their ``label`` indices and tap ``actions``."""
        g = self.grounding_set
        idx = idx.to(g.frame.device)
        frame = self.frame_of[g.frame[idx]]
        k = self.history
        return {"images": self.frames[frame.to(self.frames.device)], "frame": frame, "label": g.label[idx],
                "actions": g.actions[idx], "past_frame": frame[:, None].expand(-1, k),
                "past_actions": torch.full((len(idx), k, 4), float("nan"), device=frame.device),
                "past_valid": torch.zeros((len(idx), k), dtype=torch.bool, device=frame.device)}

    def train_dataloader(self) -> DataLoader:
        trainer = self.trainer
        rank, world = (trainer.global_rank, trainer.world_size) if trainer is not None else (0, 1)
        n = len(self.train_set)
        sampler = EpochBatches(n, self.batch_size, self.steps_per_epoch, self.seed, rank, world, self.sample_weights)
        if self.grounding_set is None:
            return DataLoader(range(n), batch_sampler=sampler,
                              collate_fn=lambda idx: self.batch(self.train_set, torch.tensor(idx)))
        examples = EpochBatches(len(self.grounding_set), self.batch_size, self.steps_per_epoch,
                                self.seed + GROUNDING_SEED, rank, world)

        def collate(idx: list[int]) -> dict:
            idx = torch.tensor(idx)
            return self.batch(self.train_set, idx[idx < n]) | {"grounding": self.grounding_batch(idx[idx >= n] - n)}

        return DataLoader(range(n + len(self.grounding_set)), batch_sampler=WithGrounding(sampler, examples, n),
                          collate_fn=collate)

    def val_dataloader(self) -> DataLoader:
        n = len(self.val_set)
        if n == 0:
            return DataLoader([])
        chunks = [list(range(i, min(i + self.batch_size, n))) for i in range(0, n, self.batch_size)]
        return DataLoader(chunks[: self.val_batches], batch_size=None,
                          collate_fn=lambda idx: self.batch(self.val_set, torch.tensor(idx)))


def _check_observations(parts: list[_Part], current: int) -> None:
    """Screens the simulated phone drew under another observation version are not what a policy sees now: training
    on them is a one-line error saying to collect them again (:func:`vlui.data.format.check_observations`)."""
    for part in parts:
        check_observations(part.path, part.info, current)


def _check_ui_trees(parts: list[_Part]) -> None:
    """Grounding reads the screens' UI trees: a dataset collected without them is a one-line error saying how to
    get them."""
    for part in parts:
        if part.table.column("xml").null_count:
            fix = ("delete it to collect the round again, with them" if part.info["recipe"].get("relabelled_by") else
                   "collect it again with save_xml=true (under another data.name)")
            raise VluiError(f"data.grounding.weight > 0 reads the screens' UI trees, but {part.path} was collected "
                            f"without them (save_xml=false): {fix}, or set data.grounding.weight=0")


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


def _distinct(screens: list[bytes | None]) -> tuple[np.ndarray, np.ndarray]:
    """The first row of each distinct screen (the same bytes are the same screen), and each row's distinct screen's
    index, in order of first appearance."""
    index: dict[bytes | None, int] = {}
    local = np.fromiter((index.setdefault(s, len(index)) for s in screens), dtype=np.int64, count=len(screens))
    return np.unique(local, return_index=True)[1].astype(np.int64), local


def past_windows(episode: np.ndarray, step: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``rows`` (indices into a table whose row ``r`` is step ``step[r]`` of episode ``episode[r]``), the
    rows of the ``k`` steps before it in its own episode, most recent first, ``(M, K)`` int64, and whether the episode
    has each ``(M, K)`` bool (its first steps have fewer before them). A step that is missing points at the row itself.
    Found by (episode, step), whatever order the table's rows are in: a window never reaches into another episode."""
    ages = np.arange(1, k + 1)
    span = int(step.max()) + 1 if len(step) else 1
    key = episode.astype(np.int64) * span + step  # (episode, step) as one number, ordered
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    wanted = key[rows][:, None] - ages  # the same episode, ``age`` steps before
    at = np.minimum(np.searchsorted(ordered, wanted), max(len(ordered) - 1, 0))
    valid = (step[rows][:, None] >= ages) & (ordered[at] == wanted) if len(ordered) else np.zeros(wanted.shape, bool)
    past = np.where(valid, order[at] if len(ordered) else 0, rows[:, None])
    return past.astype(np.int64), valid


def _actions(table, column: str = "action") -> np.ndarray:
    """An action column as ``(rows, 4)`` float32, NaN where it is null (the final-observation rows)."""
    out = np.full((table.num_rows, 4), np.nan, dtype=np.float32)
    for i, a in enumerate(table.column(column).to_pylist()):
        if a is not None:
            out[i] = a
    return out


def _select(s: Transitions, mask: torch.Tensor) -> Transitions:
    return Transitions(*(getattr(s, f)[mask] for f in s.__dataclass_fields__))
