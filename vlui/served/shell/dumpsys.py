"""``dumpsys``: display, power, input_method, battery, package, window and activity, in Android 10's layout."""

from __future__ import annotations

import zlib

from vlui.android.apps import LAUNCHER_PKG, SYSTEMUI_PID, app_uid, apps, on_phone, short_component
from vlui.served import configure
from vlui.served.phone import SDK, ServedPhone
from vlui.served.processes import IME_PID
from vlui.served.shell.apps import PACKAGES
from vlui.served.shell.context import Command, Io, Session, ShellApi

ROTATION_NAMES = ("ROTATION_0", "ROTATION_90", "ROTATION_180", "ROTATION_270")


def _ref(salt: str) -> str:
    """A stable object hash for a window, token or record (what Android prints as ``Integer.toHexString``)."""
    return f"{zlib.crc32(salt.encode()) & 0xFFFFFFF:x}"


def dumpsys(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """The parts of ``dumpsys SERVICE`` that tools read (adbutils, uiautomator2, AndroidEnv): the app in front
    (``window``, ``activity``), the display's size and rotation, the screen's power state, the keyboard, the
    battery, and a package's version."""
    phone = sh.phone
    service = args[0] if args else None
    dumps = {"display": _dump_display, "power": _dump_power, "input_method": _dump_input_method,
             "battery": _dump_battery, "package": _dump_package}
    if service == "battery" and args[1:2] and args[1] in ("set", "unplug", "reset"):
        return _battery_command(phone, io, args[1:])
    if service in dumps:
        with phone.lock:
            io.say(dumps[service](phone, args[1:]))
        return 0
    if service not in ("window", "activity"):
        io.complain(f"Can't find service: {service}\n" if service else
                    "dumpsys: the simulated phone dumps the services " + ", ".join(
                        sorted([*dumps, "window", "activity"])) + "\n")
        return 0 if service else 1
    with phone.lock:
        io.say(_dump_window(phone, args[1:]) if service == "window" else _dump_activity(phone))
    return 0


def _front(phone: ServedPhone) -> tuple[str, str]:
    """(package, activity) of the window in front: the app's, or the launcher's."""
    st = phone.device.state
    if st.top is None or st.overview:
        return LAUNCHER_PKG, LAUNCHER_PKG + ".NexusLauncherActivity"
    info = apps()[st.top]
    return info.package, info.activity


def _record(package: str, activity: str) -> str:
    task = zlib.crc32(package.encode()) % 90 + 10
    return f"ActivityRecord{{{_ref('r' + activity)} u0 {short_component(package, activity)} t{task}}}"


def _dump_activity(phone: ServedPhone) -> str:
    record = _record(*_front(phone))
    return (f"ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\nDisplay #0 (activities from top to "
            f"bottom):\n    mResumedActivity: {record}\n  ResumedActivity: {record}\n")


def _dump_window(phone: ServedPhone, args: list[str]) -> str:
    """``dumpsys window [lastanr|policy|displays|tokens|windows]``: the sections of Android 10's WindowManager
    dump with the lines tools read (the windows from top to bottom, the focus, the display's frames and
    rotation); without a section, all of them in the order WindowManager prints them."""
    sections = {"lastanr": _window_lastanr, "policy": _window_policy,
                "displays": _window_displays, "tokens": _window_tokens,
                "windows": _window_windows}
    wanted = [a for a in args if not a.startswith("-")]
    if wanted and wanted[0] in sections:
        return sections[wanted[0]](phone)
    if wanted and wanted[0] in ("-h", "help"):
        return "Window manager dump options:\n  [-a] [-h] [cmd] ...\n"
    return "\n".join(section(phone) for section in sections.values())


def _windows(phone: ServedPhone) -> list[tuple[str, str, str, int, int]]:
    """The windows on screen from top to bottom: (name, package, type, owner uid, owner pid)."""
    st = phone.device.state
    package, activity = _front(phone)
    front = f"{package}/{activity}"
    systemui = (PACKAGES["com.android.systemui"]["uid"], SYSTEMUI_PID)
    key = next((k for k, a in apps().items() if a.package == package), None)
    owner = ((app_uid(key), st.pids.get(key, configure.LAUNCHER_PID)) if key is not None
             else (configure.LAUNCHER_UID, configure.LAUNCHER_PID))
    windows = [("NavigationBar", "com.android.systemui", "NAVIGATION_BAR", *systemui),
               ("StatusBar", "com.android.systemui", "STATUS_BAR", *systemui)]
    if st.focus is not None:
        windows.append(("InputMethod", "com.google.android.inputmethod.latin", "INPUT_METHOD",
                        PACKAGES["com.google.android.inputmethod.latin"]["uid"], IME_PID))
    windows.append((front, package, "BASE_APPLICATION", *owner))
    if front.startswith(LAUNCHER_PKG):
        windows.append(("com.android.systemui.ImageWallpaper", "com.android.systemui", "WALLPAPER", *systemui))
    return windows


def _window_lastanr(phone: ServedPhone) -> str:
    return "WINDOW MANAGER LAST ANR (dumpsys window lastanr)\n  <no ANR has occurred since boot>\n"


def _window_policy(phone: ServedPhone) -> str:
    st = phone.device.state
    awake = "true" if _awake(phone) else "false"
    rotation = configure.rotation(phone)
    return ("WINDOW MANAGER POLICY STATE (dumpsys window policy)\n"
            "    mSafeMode=false mSystemReady=true mSystemBooted=true\n"
            "    mLidState=LID_ABSENT mLidOpenRotation=-1\n"
            "    mCameraLensCoverState=CAMERA_LENS_COVER_ABSENT mHdmiPlugged=false\n"
            "    mLastSystemUiFlags=0x8000 mResettingSystemUiFlags=0x0 mForceClearedSystemUiFlags=0x0\n"
            f"    mSupportAutoRotation=true mOrientationSensorEnabled={str(st.auto_rotate).lower()}\n"
            "    mUiMode=UI_MODE_TYPE_NORMAL mDockMode=EXTRA_DOCK_STATE_UNDOCKED\n"
            f"    mAwake={awake}\n    mScreenOnEarly={awake} mScreenOnFully={awake}\n"
            "    mKeyguardDrawComplete=true mWindowManagerDrawComplete=true\n"
            f"    mStatusBar=Window{{{_ref('wStatusBar')} u0 StatusBar}} isStatusBarKeyguard=false\n"
            f"    mNavigationBar=Window{{{_ref('wNavigationBar')} u0 NavigationBar}}\n"
            f"    mFocusedWindow={_focus_window(phone)}\n"
            f"    mTopFullscreenOpaqueWindowState={_focus_window(phone)}\n"
            f"    mUserRotationMode=USER_ROTATION_LOCKED mUserRotation={ROTATION_NAMES[rotation]}\n")


def _window_ref(name: str) -> str:
    return f"Window{{{_ref('w' + name)} u0 {name}}}"


def _focus_window(phone: ServedPhone) -> str:
    package, activity = _front(phone)
    return _window_ref(f"{package}/{activity}")


def _frames(phone: ServedPhone) -> dict[str, int]:
    """The display's size, rotated, and the bars' thickness in pixels."""
    dev = phone.device
    ctx = dev.ctx()
    width, height = dev.size
    rotation = configure.rotation(phone)
    if rotation % 2:
        width, height = height, width
    return {"w": width, "h": height, "status": ctx.top, "nav": dev.size[1] - ctx.bottom, "r": rotation}


def _window_displays(phone: ServedPhone) -> str:
    dev = phone.device
    f = _frames(phone)
    physical, override = configure.density(phone)
    dpi = override or physical
    pw, ph = dev.size
    app_w, app_h = (f["w"], f["h"] - f["nav"]) if f["r"] % 2 == 0 else (f["w"] - f["nav"], f["h"])
    short, long_ = min(pw, ph), max(pw, ph)
    package, activity = _front(phone)
    return ("WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n  Display: mDisplayId=0\n"
            f"    init={pw}x{ph} {physical}dpi cur={f['w']}x{f['h']} app={app_w}x{app_h} "
            f"rng={short}x{short - f['status'] - f['nav']}-{long_ - f['nav']}x{long_ - f['status'] - f['nav']}\n"
            f"    deferred=false mLayoutNeeded=false mTouchExcludeRegion=SkRegion()\n\n"
            f"  DisplayFrames w={f['w']} h={f['h']} r={f['r']}\n"
            f"    mStable=[0,{f['status']}][{app_w},{app_h}]\n"
            f"    mContent=[0,{f['status']}][{app_w},{app_h}]\n"
            f"    mDisplayCutout=DisplayCutout{{insets=Rect(0, 0 - 0, 0) boundingRect={{}}}}\n\n"
            f"  mCurrentFocus={_focus_window(phone)}\n"
            f"  mFocusedApp={_app_token(package, activity)}\n\n"
            f"  DisplayRotation\n    mCurrentAppOrientation=SCREEN_ORIENTATION_UNSPECIFIED\n"
            f"    mRotation={f['r']} mDeferredRotationPauseCount=0\n"
            "    mLandscapeRotation=ROTATION_90 mSeascapeRotation=ROTATION_270\n"
            "    mPortraitRotation=ROTATION_0 mUpsideDownRotation=ROTATION_180\n"
            f"    mUserRotationMode=USER_ROTATION_LOCKED mUserRotation={ROTATION_NAMES[f['r']]} "
            f"mAllowAllRotations=false\n    mDensity={dpi}\n")


def _app_token(package: str, activity: str) -> str:
    record = _record(package, activity)
    return f"AppWindowToken{{{_ref('a' + activity)} token=Token{{{_ref('t' + activity)} {record}}}}}"


def _window_tokens(phone: ServedPhone) -> str:
    package, activity = _front(phone)
    return ("WINDOW MANAGER TOKENS (dumpsys window tokens)\n  All tokens:\n  Display #0\n"
            f"  {_app_token(package, activity)}\n")


def _window_windows(phone: ServedPhone) -> str:
    st = phone.device.state
    f = _frames(phone)
    lines = ["WINDOW MANAGER WINDOWS (dumpsys window windows)"]
    for i, (name, package, kind, uid, pid) in enumerate(_windows(phone)):
        if kind == "STATUS_BAR":
            frame = f"[0,0][{f['w']},{f['status']}]"
        elif kind == "NAVIGATION_BAR":
            frame = f"[0,{f['h'] - f['nav']}][{f['w']},{f['h']}]"
        else:
            frame = f"[0,0][{f['w']},{f['h']}]"
        lines += [f"  Window #{i} {_window_ref(name)}:",
                  f"    mDisplayId=0 stackId=1 mSession=Session{{{_ref('s' + package)} {pid}:u0a{uid - 10000}}}",
                  f"    mOwnerUid={uid} mShowToOwnerOnly=false package={package} appop=NONE",
                  f"    mAttrs={{(0,0)(fillxfill) ty={kind} fmt=TRANSLUCENT}}",
                  "    mHasSurface=true isReadyForDisplay()=true mWindowRemovalAllowed=false",
                  f"    Frames: containing={frame} parent={frame}",
                  "    mViewVisibility=0x0 mHaveFrame=true mObscured=false"]
    package, activity = _front(phone)
    loc = phone.device.snapshot.locale.replace("-", "_")
    direction = "ldrtl" if phone.device.locale.rtl else "ldltr"
    physical, override = configure.density(phone)
    dpi = override or physical

    def dp(px: int) -> int:
        return round(px * 160 / dpi)

    app_h = f["h"] - f["nav"] if f["r"] % 2 == 0 else f["h"]
    app_w = f["w"] if f["r"] % 2 == 0 else f["w"] - f["nav"]
    orientation = "land" if f["r"] % 2 else "port"
    lines += ["",
              f"  mGlobalConfiguration={{1.0 310mcc260mnc [{loc}] {direction} sw{dp(min(f['w'], f['h']))}dp "
              f"w{dp(app_w)}dp h{dp(app_h - f['status'])}dp {dpi}dpi nrml long {orientation} finger -keyb/v/h "
              f"-nav/h winConfig={{ mBounds=Rect(0, 0 - {f['w']}, {f['h']}) mAppBounds=Rect(0, 0 - {app_w}, "
              f"{app_h}) mWindowingMode=fullscreen mDisplayWindowingMode=fullscreen mActivityType=undefined "
              f"mAlwaysOnTop=undefined mRotation={ROTATION_NAMES[f['r']]}}}}}",
              "  mHasPermanentDpad=false",
              "  mTopFocusedDisplayId=0",
              f"  mInputMethodTarget={_focus_window(phone) if st.focus is not None else 'null'}",
              f"  mInputMethodWindow={_window_ref('InputMethod') if st.focus is not None else 'null'}",
              f"  mCurrentFocus={_focus_window(phone)}",
              f"  mFocusedApp={_app_token(package, activity)}",
              f"  mScreenOn={'true' if _awake(phone) else 'false'}", ""]
    return "\n".join(lines)


# Each dump is Android 10's layout for the lines it has (the services print many more); the caller holds the lock.
def _dump_display(phone: ServedPhone, args: list[str]) -> str:
    dev = phone.device
    pw, ph = dev.size  # the panel's, in its natural orientation
    rotation = configure.rotation(phone)
    width, height = (ph, pw) if rotation % 2 else (pw, ph)
    physical, override = configure.density(phone)
    dpi = override or physical
    info = (f'DisplayInfo{{"Built-in Screen", uniqueId "local:0", app {width} x {height}, real {width} x '
            f"{height}, largest app {width} x {height}, smallest app {width} x {height}, mode 1, defaultModeId "
            f"1, modes [{{id=1, width={pw}, height={ph}, fps=60.0}}], rotation {rotation}, density {dpi} "
            f"({dpi}.0 x {dpi}.0) dpi, layerStack 0, type INTERNAL, state {'ON' if _awake(phone) else 'OFF'}, "
            "FLAG_SECURE, FLAG_SUPPORTS_PROTECTED_BUFFERS}")
    frame = f"Rect(0, 0 - {width}, {height})"
    return (f"DISPLAY MANAGER (dumpsys display)\n  mOnlyCode=false\n  mSafeMode=false\n"
            f"  mPendingTraversal=false\n  mGlobalDisplayState={'ON' if _awake(phone) else 'OFF'}\n"
            f"  mNextNonDefaultDisplayId=1\n  mViewports=[DisplayViewport{{type=INTERNAL, valid=true, "
            f"isActive=true, displayId=0, uniqueId='local:0', physicalPort=0, orientation={rotation}, "
            f"logicalFrame={frame}, physicalFrame={frame}, deviceWidth={width}, deviceHeight={height}}}]\n"
            f"  mDefaultDisplayDefaultColorMode=0\n\nDisplay Adapters: size=1\n  LocalDisplayAdapter\n\n"
            f"Logical Displays: size=1\n  Display 0:\n    mDisplayId=0\n    mLayerStack=0\n"
            f"    mHasContent=true\n    mRequestedColorMode=0\n    mDisplayOffset=(0, 0)\n"
            f"    mPrimaryDisplayDevice=Built-in Screen\n    mBaseDisplayInfo={info}\n"
            f"    mOverrideDisplayInfo={info}\n")


def _awake(phone: ServedPhone) -> bool:
    return phone.device.state.screen_on


def _dump_power(phone: ServedPhone, args: list[str]) -> str:
    awake, st = _awake(phone), phone.device.state
    return (f"POWER MANAGER (dumpsys power)\n\nPower Manager State:\n  mDirty=0x0\n"
            f"  mWakefulness={'Awake' if awake else 'Asleep'}\n  mWakefulnessChanging=false\n"
            f"  mIsPowered={str(st.charging).lower()}\n  mPlugType={int(st.charging)}\n"
            f"  mBatteryLevel={st.battery_level}\n"
            f"  mBatteryLevelWhenDreamStarted=0\n  mDockState=0\n  mStayOn=false\n  mProximityPositive=false\n"
            f"  mBootCompleted=true\n  mSystemReady=true\n  mHoldingWakeLockSuspendBlocker=false\n"
            f"  mHoldingDisplaySuspendBlocker={'true' if awake else 'false'}\n"
            f"  mDisplayReady=true\n  mScreenBrightnessSetting={phone.device.state.brightness}\n\n"
            f"Display Power: state={'ON' if awake else 'OFF'}\n")


def _dump_input_method(phone: ServedPhone, args: list[str]) -> str:
    st = phone.device.state
    shown = st.focus is not None
    ime = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"
    client = apps()[st.focus[0]].package if shown and st.focus[0] in apps() else LAUNCHER_PKG
    return (f"Current Input Method Manager state:\n  mCurMethodId={ime}\n  mCurrentSubtype=null\n"
            f"  mCurFocusedWindowClient={'ClientState{' + client + '}' if shown else 'null'}\n"
            f"  mCurId={ime} mHaveConnection={'true' if shown else 'false'} mBoundToMethod=true "
            f"mVisibleBound={'true' if shown else 'false'}\n  mShowRequested={'true' if shown else 'false'} "
            f"mShowExplicitlyRequested=false mShowForced=false mInputShown={'true' if shown else 'false'}\n"
            f"  mInFullscreenMode=false\n  mSystemReady=true mInteractive={'true' if _awake(phone) else 'false'}\n")


def _dump_battery(phone: ServedPhone, args: list[str]) -> str:
    st = phone.device.state
    # BatteryManager's status: 2 charging, 3 discharging, 5 full (on power at 100%)
    status = (5 if st.battery_level == 100 else 2) if st.charging else 3
    return (f"Current Battery Service state:\n  AC powered: {str(st.charging).lower()}\n"
            "  USB powered: false\n  Wireless powered: false\n  Max charging current: 0\n"
            "  Max charging voltage: 0\n  Charge counter: 10000\n"
            f"  status: {status}\n  health: 2\n  present: true\n  level: {st.battery_level}\n  scale: 100\n"
            "  voltage: 5000\n  temperature: 250\n  technology: Li-ion\n")


def _battery_command(phone: ServedPhone, io: Io, args: list[str]) -> int:
    """``dumpsys battery set level N | set ac 0|1 | set status N | unplug | reset``: BatteryService's shell
    commands, which override what the battery reports (the emulator builder gives a snapshot its battery so)."""
    st = phone.device.state
    if args[0] == "set":
        if len(args) != 3 or args[1] not in ("level", "ac", "usb", "wireless", "status", "present", "invalid",
                                             "counter", "temp"):
            io.complain("Bad option: " + " ".join(args[1:]) + "\n")
            return 255
        try:
            value = int(args[2])
        except ValueError:
            io.complain(f"Bad value: {args[2]}\n")
            return 255
        with phone.lock:
            if args[1] == "level":
                st.battery_level = min(max(value, 0), 100)
            elif args[1] == "ac":
                st.charging = value != 0
            phone.device.state_changed()
    elif args[0] == "unplug":
        with phone.lock:
            st.charging = False
            phone.device.state_changed()
    return 0  # reset: the simulated battery has nothing else to report than what was set


def _dump_package(phone: ServedPhone, args: list[str]) -> str:
    """``dumpsys package NAME``: the package's record; for a package the phone does not have (a third-party app it
    has not installed), nothing, as on Android (which then prints only the headers of its tables)."""
    names = [a for a in args if not a.startswith("-")]
    if not names or names[0] not in PACKAGES:
        return ""
    name, info = names[0], PACKAGES[names[0]]
    key = next((k for k, a in apps().items() if a.package == name), None)
    if key is not None and not on_phone(key, phone.device.state.installed):
        return ""
    uid = app_uid(key) if key is not None else info["uid"]
    system = "SYSTEM " if key is None or not apps()[key].third_party else ""
    stamp = "2008-12-31 16:00:00"  # system apps keep the build's fixed install time
    return (f"Packages:\n  Package [{name}] ({zlib.crc32(name.encode()) & 0xFFFFFFF:x}):\n    userId={uid}\n"
            f"    pkg=Package{{{zlib.crc32(b'p' + name.encode()) & 0xFFFFFFF:x} {name}}}\n"
            f"    codePath={info['codePath']}\n    resourcePath={info['codePath']}\n"
            f"    versionCode={info['versionCode']} minSdk={SDK} targetSdk={SDK}\n"
            f"    versionName={info['versionName']}\n    splits=[base]\n    apkSigningVersion=3\n"
            f"    flags=[ {system}HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]\n    timeStamp={stamp}\n"
            f"    firstInstallTime={stamp}\n    lastUpdateTime={stamp}\n    installerPackageName=null\n"
            f"    User 0: ceDataInode=0 installed=true hidden=false suspended=false stopped=false "
            f"notLaunched=false enabled=0 instant=false virtual=false\n")


COMMANDS: dict[str, Command] = {"dumpsys": dumpsys}
