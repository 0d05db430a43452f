"""The Hugging Face Hub, through ``huggingface_hub``, with one-line errors: a policy or a dataset shared there is
downloaded by its repo id (``owner/name``) and uploaded with its card (docs/sharing.md).

vlui reaches the Hub only when asked to (``from_pretrained`` of a repo id, ``push``); the policies' pretrained encoders
ship as packages. Whatever goes wrong on the way (no network, ``HF_HUB_OFFLINE=1``, no such repository, no token) is a
:class:`~vlui.errors.VluiError` naming the repository and what to do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from huggingface_hub import HfApi, errors, snapshot_download

from vlui.errors import VluiError

# the Hub's repo ids: one namespace and one name (what huggingface_hub's validation accepts)
REPO_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9])?/[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9])?")
DOWNLOAD_OFFLINE = ("the Hub cannot be reached (no network, or HF_HUB_OFFLINE=1) and it is not in the local cache: "
                    "connect to the network, or give a local folder")
UPLOAD_OFFLINE = "the Hub cannot be reached (no network, or HF_HUB_OFFLINE=1): connect to the network to upload"


def is_repo_id(text: str) -> bool:
    """Whether ``text`` reads as a Hub repo id (``owner/name``), not a path (``./x``, ``a/b/c``, ``/abs``)."""
    return bool(REPO_ID.fullmatch(text)) and ".." not in text


@contextmanager
def hub_errors(what: str, uploading: bool = False) -> Iterator[None]:
    """Turn what the Hub raises while doing ``what`` ("downloading policy owner/name") into one-line errors."""
    try:
        yield
    except VluiError:
        raise
    except errors.GatedRepoError:
        raise VluiError(f"{what}: the repository is gated: accept its conditions on the Hub and log in "
                        "(`hf auth login` or HF_TOKEN)") from None
    except errors.RepositoryNotFoundError:
        raise VluiError(f"{what}: no such repository on the Hub, or it is private (log in with `hf auth login` or set "
                        "HF_TOKEN)") from None
    except errors.RevisionNotFoundError:
        raise VluiError(f"{what}: the repository has no such revision") from None
    except errors.LocalTokenNotFoundError:
        raise VluiError(f"{what}: no Hub token: log in with `hf auth login` or set HF_TOKEN") from None
    except (errors.LocalEntryNotFoundError, errors.OfflineModeIsEnabled):
        raise VluiError(f"{what}: {UPLOAD_OFFLINE if uploading else DOWNLOAD_OFFLINE}") from None
    except errors.HFValidationError as err:
        raise VluiError(f"{what}: {_first_line(err)}") from None
    except errors.HfHubHTTPError as err:
        status = getattr(getattr(err, "response", None), "status_code", None)
        raise VluiError(f"{what}: the Hub answered{f' {status}' if status else ''}: {_first_line(err)}") from None
    except Exception as err:  # noqa: BLE001 - the HTTP client's own transport errors (httpx, requests) vary by version
        if not _transport_error(err):
            raise
        remedy = "connect to the network to upload" if uploading else "connect to the network, or give a local folder"
        raise VluiError(f"{what}: the Hub cannot be reached ({type(err).__name__}: {_first_line(err)}): {remedy}") \
            from None


def download(repo_id: str, what: str, repo_type: str = "model", allow_patterns: list[str] | None = None,
             revision: str | None = None, cache_dir: str | Path | None = None, token: str | bool | None = None,
             force_download: bool = False, local_files_only: bool = False) -> Path:
    """The local folder of ``repo_id``'s files (those of ``allow_patterns``), downloaded into the Hub's cache unless
    they are there already; ``what`` begins an error's line ("downloading policy owner/name")."""
    with hub_errors(what):
        return Path(snapshot_download(repo_id, repo_type=repo_type, allow_patterns=allow_patterns, revision=revision,
                                      cache_dir=cache_dir, token=token, force_download=force_download,
                                      local_files_only=local_files_only))


def upload(folder: Path, repo_id: str, repo_type: str, private: bool | None = None, token: str | None = None,
           allow_patterns: list[str] | None = None, ignore_patterns: list[str] | None = None,
           message: str = "Upload with vlui") -> str:
    """Upload ``folder``'s files (those of ``allow_patterns``, less those of ``ignore_patterns``) to ``repo_id``
    (created when missing) in one commit; its URL."""
    with hub_errors(f"uploading {folder} to {repo_id}", uploading=True):
        api = HfApi(token=token)
        repo = api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True).repo_id
        commit = api.upload_folder(repo_id=repo, repo_type=repo_type, folder_path=folder, commit_message=message,
                                   allow_patterns=allow_patterns, ignore_patterns=ignore_patterns)
        return str(getattr(commit, "commit_url", commit))


def _transport_error(err: BaseException) -> bool:
    names = {c.__name__ for c in type(err).__mro__}
    return bool(names & {"TransportError", "ConnectionError", "RequestError", "Timeout", "TimeoutException"})


def _first_line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0][:200]


def front_matter(text: str, path: Path, again: str) -> dict[str, Any]:
    """A card's YAML front matter (between its first two ``---`` lines) as a mapping; ``again`` ends the one-line
    error when there is none, it is not YAML or not a mapping (what to do about it)."""
    match = re.match(r"---\n(.*?)\n---\n", text, re.DOTALL)
    if not match:
        raise VluiError(f"{path} has no YAML front matter (between --- lines): {again}")
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as err:
        raise VluiError(f"{path}: its front matter is not YAML ({str(err).splitlines()[0]}): {again}") from None
    if not isinstance(meta, dict):
        raise VluiError(f"{path}: its front matter is not a mapping: {again}")
    return meta
