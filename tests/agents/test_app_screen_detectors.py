"""The in-app screens' tasks (Files roots, Contacts editor, search fields, Messages' Start chat, Chrome history,
Photos trash, YouTube TV pairing): each detector fires on its own task's expert trajectory and stays silent on every
other supported task's, and the other tasks' detectors stay silent on its (opening the app aside). Opening an app must
not show a Files root, focus a search field, start a chat or open the contact editor by itself.

Snapshots: those of ``test_settings_phone_detectors`` (its ``fired`` fixture is shared)."""

from __future__ import annotations

import pytest

from tests.agents.test_settings_phone_detectors import INHERENT_OVERLAPS, SNAPSHOTS, fired  # noqa: F401
from vlui.agents.walkthrough import walkthrough
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import Detector, release_tasks, task_set, tasks

APP_SCREENS = ("files_audio", "files_images", "files_videos", "files_downloads", "contacts_insert", "contacts_edit",
               "search_chrome", "search_maps", "search_youtube", "search_google", "search_messages",
               "messages_start_chat", "chrome_history", "photos_trash", "youtube_pairing")


def test_app_screen_tasks_are_supported() -> None:
    assert set(APP_SCREENS) <= set(task_set("supported"))


@pytest.mark.slow
@pytest.mark.parametrize("task", APP_SCREENS)
def test_detector_fires_exactly_on_its_own_task(fired, task: str) -> None:  # noqa: F811
    for (traj, snap), hits in fired.items():
        expected = traj == task or (traj, task) in INHERENT_OVERLAPS
        assert (task in hits) == expected, f"{task}'s detector on the {traj} trajectory ({snap}): {sorted(hits)}"


@pytest.mark.parametrize("task", APP_SCREENS)
def test_only_its_own_detector_fires_on_its_trajectory(fired, task: str) -> None:  # noqa: F811
    for snap in SNAPSHOTS:
        assert fired[task, snap] == {task}, f"{task} on {snap}: {sorted(fired[task, snap])}"


@pytest.mark.parametrize("app", ["files", "contacts", "chrome", "maps", "youtube", "messages", "photos"])
def test_opening_an_app_fires_none_of_these_detectors(app: str) -> None:
    """The app's first screen, as the launcher opens it: Files on Recent, no field focused, no editor."""
    dev = SimDevice("000")
    mark = dev.log_mark()
    dev.launch(app)
    dev.frame()
    hits = [t for t in APP_SCREENS if Detector(tasks()[t]).match(dev.log_lines(mark)) is not None]
    assert not hits and dev.state.focus is None, f"opening {app}: {hits}"


def test_files_root_log_names_the_documents_provider_root() -> None:
    dev = SimDevice("000")
    walkthrough(dev, "files_audio", "000")  # open Files, tap Audio
    lines = [line.split(": ", 1)[1] for line in dev.log_lines(tags=["DirectoryFragment"])]
    # the root's document URI (DocumentInfo.debugString), which the paper's regex and the release's both match
    assert lines == ["Showing directory: content://com.android.providers.media.documents/document/audio_root"]
    release = release_tasks()["b25_files_audio"]
    assert Detector(release).match(dev.log_lines()) and Detector(tasks()["files_audio"]).match(dev.log_lines())


def test_starting_a_chat_fires_the_papers_detector_and_the_releases() -> None:
    dev = SimDevice("000")
    walk = walkthrough(dev, "messages_start_chat", "000")
    assert walk.success and Detector(release_tasks()["b25_messages_start_chat"]).match(walk.lines)
