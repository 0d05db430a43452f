"""Instagram (com.instagram.android 325.0.0.35.91, B-MoCA release 2.5) on the simulated phone: signed in, its tab bar
as B-MoCA's evaluators read it, Home, the explore grid, the reel, the profile and its tabs, New post, BACK, its
languages, right-to-left and small and large screens; and over ADB, the served phone's verdict on one of its tasks."""

from __future__ import annotations

import pytest

from tests.sim.driver import nodes, tap
from tests.sim.release_apps import by_rid, opened, verdicts_over_adb
from tests.sim.release_apps import holding as holding_on
from vlui.sim.apps.instagram import PKG, catalogue
from vlui.sim.phone import SimDevice

BAR = ["feed_tab", "search_tab", "creation_tab", "clips_tab", "profile_tab"]


def instagram(snapshot: str = "000") -> SimDevice:
    return opened("instagram", snapshot)


def by_id(dev: SimDevice, name: str):
    return by_rid(dev, f"{PKG}:id/{name}")


def holding(dev: SimDevice) -> list[str]:
    return holding_on(dev, "instagram")


def test_it_opens_signed_in_on_home_with_the_tab_bar_and_only_the_open_task_holds() -> None:
    dev = instagram()
    bar = [by_id(dev, name) for name in BAR]
    assert [n.desc for n in bar] == ["Home", "Search and explore", "Create", "Reels", "Profile"]
    assert [n.selected for n in bar] == [True, False, False, False, False]
    assert all(n.bounds[1] >= by_id(dev, "tab_bar").bounds[1] for n in bar)
    assert holding(dev) == ["b25_open_instagram"]
    xml = dev.ui_xml()
    assert 'content-desc="Your story"' in xml and catalogue()["feed"][0]["caption"] in xml


@pytest.mark.parametrize("tab, task", [("profile_tab", "b25_instagram_profile"), ("clips_tab", "b25_instagram_reels"),
                                       ("search_tab", "b25_instagram_search")])
def test_each_tab_is_selected_where_its_task_reads_it_and_back_returns_home(tab: str, task: str) -> None:
    dev = instagram()
    tap(dev, by_id(dev, tab))
    assert holding(dev) == [task]
    dev.key("BACK")
    assert holding(dev) == ["b25_open_instagram"]
    dev.key("BACK")
    assert dev.state.top is None  # BACK on Home leaves the app


def test_the_profile_shows_the_account_and_its_tabs_as_the_releases_xpaths_read_them() -> None:
    dev = instagram()
    tap(dev, by_id(dev, "profile_tab"))
    account = catalogue()["account"]
    assert by_id(dev, "action_bar_title").text == account["username"]
    assert by_id(dev, "row_profile_header_textview_followers_count").text == str(account["followers"])
    strip = by_id(dev, "profile_tab_layout")
    assert strip.cls == "android.widget.HorizontalScrollView"
    (inner,) = strip.children
    frames = [tab.children[0] for tab in inner.children]
    assert [f.cls for f in frames] == ["android.widget.FrameLayout"] * 3 and [f.selected for f in frames] == [
        True, False, False]
    tap(dev, frames[2])  # tagged posts
    frames = [tab.children[0] for tab in by_id(dev, "profile_tab_layout").children[0].children]
    assert [f.selected for f in frames] == [False, False, True] and holding(dev) == ["b25_instagram_profile"]


def test_create_opens_new_post_over_the_tabs_and_its_x_closes_it() -> None:
    dev = instagram()
    tap(dev, by_id(dev, "creation_tab"))
    assert by_id(dev, "action_bar_title").text == "New post" and holding(dev) == []
    tap(dev, by_id(dev, "action_bar_button_back"))
    assert holding(dev) == ["b25_open_instagram"]


def test_the_reel_fills_the_screen_over_a_dark_tab_bar() -> None:
    dev = instagram()
    tap(dev, by_id(dev, "clips_tab"))
    assert by_id(dev, "clips_author_username").text == catalogue()["reel"]["user"]
    assert by_id(dev, "tab_bar").bg == (0, 0, 0)


def test_its_languages() -> None:
    """The phone's language where Instagram has it (Korean, Spanish); English where it has not (Akan)."""
    korean, akan = instagram("105"), instagram("032")
    assert korean.snapshot.locale == "ko-KR" and by_id(korean, "search_tab").desc == "검색 및 탐색"
    assert akan.snapshot.locale == "ak-GH" and by_id(akan, "feed_tab").desc == "Home"
    spanish = instagram("021")
    assert by_id(spanish, "profile_tab").desc == "Perfil"


@pytest.mark.parametrize("snapshot", ["030", "109", "gen-0-115", "gen-0-92"])
def test_right_to_left_small_and_large_screens(snapshot: str) -> None:
    """Arabic on a phone and the tablet (mirrored: Home at the right), a phone 249 dp wide with large text and a
    tablet 1499 dp wide: the tab bar on screen, each task's tab where a tap reaches it."""
    dev = instagram(snapshot)
    w, h = dev.ctx().width, dev.ctx().height
    home, profile = by_id(dev, "feed_tab"), by_id(dev, "profile_tab")
    assert (home.bounds[0] > profile.bounds[0]) == dev.ctx().locale.rtl
    for name in BAR:
        x1, y1, x2, y2 = by_id(dev, name).bounds
        assert 0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h, name
    for tab, task in (("search_tab", "b25_instagram_search"), ("clips_tab", "b25_instagram_reels"),
                      ("profile_tab", "b25_instagram_profile")):
        tap(dev, by_id(dev, tab))
        assert holding(dev) == [task]
    assert nodes(dev, lambda n: n.rid == f"{PKG}:id/row_profile_header_imageview")


def test_the_served_phone_gives_the_in_process_verdict_on_the_reels_task() -> None:
    """Over ADB: the reels task's check reads the same tree as in process, before and after a tap on Reels."""
    assert verdicts_over_adb("instagram", [f"{PKG}:id/clips_tab"]) == [
        (["b25_open_instagram"],) * 2, (["b25_instagram_reels"],) * 2]
