"""Walmart (com.walmart.android 24.19, B-MoCA release 2.5) on the simulated phone: the guest's five tabs, the
category pages, the cart and the store map as B-MoCA's evaluators read them, BACK, the locales it ships and the ones
it does not, right-to-left and small and large screens; and over ADB, the served phone's verdict on one of its tasks."""

from __future__ import annotations

import pytest

from tests.sim.driver import nodes, one, tap
from vlui.adb.device import AdbDevice
from vlui.backends import make_device
from vlui.env.ui_text import parse_xml
from vlui.errors import VluiError
from vlui.sim.apps.walmart import PKG, TABS, WalmartState, catalogue
from vlui.sim.phone import SimDevice
from vlui.served.private_adb import PrivateAdb
from vlui.tasks.catalog import release_pins, release_tasks
from vlui.tasks.checks import check_holds

from tests.adb.test_device import adb_env

WALMART_TASKS = [t for t in release_tasks().values() if "walmart" in t.apps]


def opened(snapshot: str = "000", **state) -> SimDevice:
    """Snapshot ``snapshot`` with Walmart installed (as a release run's phone has it) and open on its Shop tab."""
    dev = SimDevice(snapshot, noise=False)
    dev.install_apps([release_pins()["walmart"]])
    if state:
        dev.set_state({"walmart": state})
    dev.launch("walmart")
    dev.state.starting = None
    dev.state_changed()
    return dev


def by_id(dev: SimDevice, name: str):
    return one(dev, lambda n: n.rid == f"{PKG}:id/{name}", name)


def holding(dev: SimDevice) -> list[str]:
    """The Walmart tasks whose evaluator check holds on the screen now."""
    return [t.id for t in WALMART_TASKS if check_holds(t.evaluator_check, dev, lambda: parse_xml(dev.ui_xml()))]


def test_it_opens_on_the_shop_tab_with_the_bottom_navigation_and_only_the_open_task_holds() -> None:
    dev = opened()
    items = nodes(dev, lambda n: n.rid.startswith(f"{PKG}:id/navigation_") and n.rid.split("_", 1)[1] in TABS)
    assert [n.desc for n in items] == ["Shop", "My Items", "Search", "Services", "Account"]
    assert [n.selected for n in items] == [True, False, False, False, False]
    assert holding(dev) == ["b25_open_walmart"]
    assert by_id(dev, "search_bar").text == "Search Walmart"
    assert catalogue()["store"]["name"] in dev.ui_xml()


@pytest.mark.parametrize("tab, task", [("account", "b25_walmart_account"), ("my_items", "b25_walmart_my_items"),
                                       ("search", "b25_walmart_search"), ("services", "b25_walmart_services")])
def test_each_tab_is_selected_where_its_task_reads_it_and_back_returns_to_shop(tab: str, task: str) -> None:
    dev = opened()
    tap(dev, by_id(dev, f"navigation_{tab}"))
    assert sorted(holding(dev)) == sorted(["b25_open_walmart", task])
    dev.key("BACK")
    assert dev.state.top == "walmart" and by_id(dev, "navigation_shop").selected
    dev.key("BACK")
    assert dev.state.top is None  # BACK on Shop leaves the app


def test_grocery_opens_its_category_page_with_its_subcategories() -> None:
    dev = opened()
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
    dev = opened()
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
    dev = opened(cart=["Bananas, each", "Bananas, each"])
    assert dev.state.app("walmart", WalmartState).cart == ["Bananas, each"] * 2
    assert by_id(dev, "cart_button").desc == "Cart, 2 items"
    tap(dev, by_id(dev, "cart_button"))
    assert "Subtotal (2 items)" in dev.ui_xml() and "$0.54" in dev.ui_xml()
    with pytest.raises(VluiError, match="walmart: cart: 'Apples' is not in the catalogue; products: Great Value"):
        dev.set_state({"walmart": {"cart": ["Apples"]}})


def test_spanish_phones_get_its_spanish_and_others_its_english_the_catalogue_stays_english() -> None:
    spanish = opened("021")
    assert spanish.snapshot.locale == "es-US"
    assert by_id(spanish, "navigation_account").desc == "Cuenta"
    assert by_id(spanish, "search_bar").text == "Buscar en Walmart"
    tap(spanish, by_id(spanish, "navigation_search"))
    assert one(spanish, lambda n: n.text == "Grocery", "Grocery")  # the catalogue's name, as the server sends it
    korean = opened("105")
    assert korean.snapshot.locale == "ko-KR" and by_id(korean, "navigation_account").desc == "Account"


@pytest.mark.parametrize("snapshot", ["030", "109", "gen-0-115", "gen-0-92"])
def test_right_to_left_small_and_large_screens(snapshot: str) -> None:
    """Arabic on a phone and on the tablet (mirrored: Shop at the right), a phone 249 dp wide with large text and a
    tablet 1499 dp wide: every tab and the header's buttons on screen, each task's path there."""
    dev = opened(snapshot)
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
    """Over ADB (a real adb server, the phone served in this process with Walmart installed): the account task's
    check reads the same tree as in process, before and after a tap on the Account tab."""
    task = release_tasks()["b25_walmart_account"]
    local = opened()
    with PrivateAdb("000") as server:
        dev = make_device(adb_env(server), "000")
        assert isinstance(dev, AdbDevice)
        try:
            server.phone.device.install_apps([release_pins()["walmart"]])
            dev.shell(f"am start -n {PKG}/com.walmart.glass.integration.splash.SplashActivity")
            server.phone.device.state.starting = None
            server.phone.device.state_changed()
            for step in range(2):
                verdicts = [check_holds(task.evaluator_check, d, lambda d=d: parse_xml(d.ui_xml()))
                            for d in (dev, local)]
                assert verdicts == [step == 1] * 2, step
                x1, y1, x2, y2 = by_id(local, "navigation_account").bounds
                tap(local, by_id(local, "navigation_account"))
                dev.tap((x1 + x2) / 2, (y1 + y2) / 2)
        finally:
            dev.close()
