"""Walmart (com.walmart.android 24.19, B-MoCA release 2.5) on the simulated phone: the guest's five tabs, the
category pages, the cart and the store map as B-MoCA's evaluators read them, BACK, the locales it ships and the ones
it does not, right-to-left and small and large screens; and over ADB, the served phone's verdict on one of its tasks."""

from __future__ import annotations

import pytest

from tests.sim.driver import nodes, one, tap
from tests.sim.release_apps import by_rid, opened, verdicts_over_adb
from tests.sim.release_apps import holding as holding_on
from vlui.errors import VluiError
from vlui.sim.apps.walmart import PKG, TABS, WalmartState, catalogue
from vlui.sim.phone import SimDevice


def walmart(snapshot: str = "000", **state) -> SimDevice:
    return opened("walmart", snapshot, state)


def by_id(dev: SimDevice, name: str):
    return by_rid(dev, f"{PKG}:id/{name}")


def holding(dev: SimDevice) -> list[str]:
    return holding_on(dev, "walmart")


def test_it_opens_on_the_shop_tab_with_the_bottom_navigation_and_only_the_open_task_holds() -> None:
    dev = walmart()
    items = nodes(dev, lambda n: n.rid.startswith(f"{PKG}:id/navigation_") and n.rid.split("_", 1)[1] in TABS)
    assert [n.desc for n in items] == ["Shop", "My Items", "Search", "Services", "Account"]
    assert [n.selected for n in items] == [True, False, False, False, False]
    assert holding(dev) == ["b25_open_walmart"]
    assert by_id(dev, "search_bar").text == "Search Walmart"
    assert catalogue()["store"]["name"] in dev.ui_xml()


@pytest.mark.parametrize("tab, task", [("account", "b25_walmart_account"), ("my_items", "b25_walmart_my_items"),
                                       ("search", "b25_walmart_search"), ("services", "b25_walmart_services")])
def test_each_tab_is_selected_where_its_task_reads_it_and_back_returns_to_shop(tab: str, task: str) -> None:
    dev = walmart()
    tap(dev, by_id(dev, f"navigation_{tab}"))
    assert sorted(holding(dev)) == sorted(["b25_open_walmart", task])
    dev.key("BACK")
    assert dev.state.top == "walmart" and by_id(dev, "navigation_shop").selected
    dev.key("BACK")
    assert dev.state.top is None  # BACK on Shop leaves the app


def test_grocery_opens_its_category_page_with_its_subcategories() -> None:
    dev = walmart()
    tap(dev, by_id(dev, "navigation_search"))
    tap(dev, one(dev, lambda n: n.text == "Grocery", "Grocery"))
    assert by_id(dev, "category_container_title").text == "Grocery"
    shown = [n.text for n in nodes(dev, lambda n: n.rid == f"{PKG}:id/category_item_title")]
    assert shown and shown == catalogue()["departments"][0]["subcategories"][:len(shown)]
    assert "b25_walmart_grocery" in holding(dev) and by_id(dev, "navigation_search").selected
    tap(dev, by_id(dev, "navigation_account"))  # a tab closes the category page
    assert not nodes(dev, lambda n: n.rid == f"{PKG}:id/category_container_title")
    tap(dev, by_id(dev, "navigation_search"))
    tap(dev, one(dev, lambda n: n.text == "Electronics", "Electronics"))
    assert "b25_walmart_grocery" not in holding(dev)
    dev.key("BACK")
    assert by_id(dev, "navigation_search").selected


def test_the_store_map_and_the_cart_hold_their_checks_and_back_leaves_them() -> None:
    dev = walmart()
    tap(dev, by_id(dev, "navigation_services"))
    tap(dev, one(dev, lambda n: n.text == "Store map", "Store map"))
    assert holding(dev) == ["b25_walmart_store_map"]  # a screen over the tabs: no bottom navigation
    assert 'text="Grocery"' in dev.ui_xml()  # a block of the map
    dev.key("BACK")
    tap(dev, by_id(dev, "cart_button"))
    assert holding(dev) == ["b25_walmart_cart"] and "Time to start shopping!" in dev.ui_xml()
    tap(dev, by_id(dev, "cart_empty_button"))
    assert by_id(dev, "navigation_shop").selected


def test_a_cart_set_by_a_state_lists_its_items_and_a_product_not_in_the_catalogue_is_refused() -> None:
    dev = walmart(cart=["Bananas, each", "Bananas, each"])
    assert dev.state.app("walmart", WalmartState).cart == ["Bananas, each"] * 2
    assert by_id(dev, "cart_button").desc == "Cart, 2 items"
    tap(dev, by_id(dev, "cart_button"))
    assert "Subtotal (2 items)" in dev.ui_xml() and "$0.54" in dev.ui_xml()
    with pytest.raises(VluiError, match="walmart: cart: 'Apples' is not in the catalogue; products: Great Value"):
        dev.set_state({"walmart": {"cart": ["Apples"]}})


def test_spanish_phones_get_its_spanish_and_others_its_english_the_catalogue_stays_english() -> None:
    spanish = walmart("021")
    assert spanish.snapshot.locale == "es-US"
    assert by_id(spanish, "navigation_account").desc == "Cuenta"
    assert by_id(spanish, "search_bar").text == "Buscar en Walmart"
    tap(spanish, by_id(spanish, "navigation_search"))
    assert one(spanish, lambda n: n.text == "Grocery", "Grocery")  # the catalogue's name, as the server sends it
    korean = walmart("105")
    assert korean.snapshot.locale == "ko-KR" and by_id(korean, "navigation_account").desc == "Account"


@pytest.mark.parametrize("snapshot", ["030", "109", "gen-0-115", "gen-0-92"])
def test_right_to_left_small_and_large_screens(snapshot: str) -> None:
    """Arabic on a phone and on the tablet (mirrored: Shop at the right), a phone 249 dp wide with large text and a
    tablet 1499 dp wide: every tab and the header's buttons on screen, each task's path there."""
    dev = walmart(snapshot)
    w, h = dev.ctx().width, dev.ctx().height
    shop, account = by_id(dev, "navigation_shop"), by_id(dev, "navigation_account")
    assert (shop.bounds[0] > account.bounds[0]) == dev.ctx().locale.rtl
    for name in ("navigation_shop", "navigation_my_items", "navigation_search", "navigation_services",
                 "navigation_account", "cart_button", "search_bar"):
        x1, y1, x2, y2 = by_id(dev, name).bounds
        assert 0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h, name
    tap(dev, account)
    assert "b25_walmart_account" in holding(dev)
    tap(dev, by_id(dev, "navigation_services"))
    tap(dev, one(dev, lambda n: n.text == dev.ctx().t("walmart.store_map"), "Store map"))
    assert holding(dev) == ["b25_walmart_store_map"]


def test_the_served_phone_gives_the_in_process_verdict_on_the_account_task() -> None:
    """Over ADB: the account task's check reads the same tree as in process, before and after a tap on Account."""
    assert verdicts_over_adb("walmart", [f"{PKG}:id/navigation_account"]) == [
        (["b25_open_walmart"],) * 2, (["b25_walmart_account", "b25_open_walmart"],) * 2]
