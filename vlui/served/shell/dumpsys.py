"""``dumpsys``: display, power, input_method, battery, package, window and activity, in Android 10's layout."""

from __future__ import annotations

import zlib

from vlui.android.apps import LAUNCHER_PKG, app_uid, apps, short_component
from vlui.served import configure
from vlui.served.phone import SDK, ServedPhone
from vlui.served.shell.apps import PACKAGES
from vlui.served.shell.context import _Io, _Session


class DumpsysCommands:
    """The dumpsys commands of :class:`~vlui.served.shell.runner.Shell` (a mixin: ``self`` is the shell)."""

    phone: ServedPhone

    def _dumpsys(self, s: _Session, io: _Io, args: list[str]) -> int:
        """The parts of ``dumpsys SERVICE`` that tools read (adbutils, uiautomator2, AndroidEnv): the app in front
        (``window``, ``activity``), the display's size and rotation, the screen's power state, the keyboard, the
        battery, and a package's version."""
        service = args[0] if args else None
        dumps = {"display": self._dump_display, "power": self._dump_power, "input_method": self._dump_input_method,
                 "battery": self._dump_battery, "package": self._dump_package}
        if service == "battery" and args[1:2] and args[1] in ("set", "unplug", "reset"):
            return self._battery_command(io, args[1:])
        if service in dumps:
            with self.phone.lock:
                io.say(dumps[service](args[1:]))
            return 0
        if service not in ("window", "activity"):
            io.complain(f"Can't find service: {service}\n" if service else
                        "dumpsys: the simulated phone dumps the services " + ", ".join(
                            sorted([*dumps, "window", "activity"])) + "\n")
            return 0 if service else 1
        with self.phone.lock:
            st = self.phone.device.state
            if st.top is None or st.overview:
                package, activity = LAUNCHER_PKG, LAUNCHER_PKG + ".NexusLauncherActivity"
            else:
                info = apps()[st.top]
                package, activity = info.package, info.activity

        def ref(salt: str) -> str:
            return f"{zlib.crc32((salt + activity).encode()) & 0xFFFFFFF:x}"

        task = zlib.crc32(package.encode()) % 90 + 10
        record = f"ActivityRecord{{{ref('r')} u0 {short_component(package, activity)} t{task}}}"
        if service == "window":
            io.say(f"WINDOW MANAGER WINDOWS (dumpsys window windows)\n"
                   f"  mCurrentFocus=Window{{{ref('w')} u0 {package}/{activity}}}\n"
                   f"  mFocusedApp=AppWindowToken{{{ref('a')} token=Token{{{ref('t')} {record}}}}}\n")
        else:
            io.say(f"ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\nDisplay #0 (activities from top to "
                   f"bottom):\n    mResumedActivity: {record}\n  ResumedActivity: {record}\n")
        return 0

    # Each dump is Android 10's layout for the lines it has (the services print many more); the caller holds the lock.
    def _dump_display(self, args: list[str]) -> str:
        dev = self.phone.device
        width, height = dev.size
        physical, override = configure.density(self.phone)
        dpi = override or physical
        info = (f'DisplayInfo{{"Built-in Screen", uniqueId "local:0", app {width} x {height}, real {width} x '
                f"{height}, largest app {width} x {height}, smallest app {width} x {height}, mode 1, defaultModeId "
                f"1, modes [{{id=1, width={width}, height={height}, fps=60.0}}], rotation 0, density {dpi} "
                f"({dpi}.0 x {dpi}.0) dpi, layerStack 0, type INTERNAL, state {'ON' if self._awake() else 'OFF'}, "
                "FLAG_SECURE, FLAG_SUPPORTS_PROTECTED_BUFFERS}")
        frame = f"Rect(0, 0 - {width}, {height})"
        return (f"DISPLAY MANAGER (dumpsys display)\n  mOnlyCode=false\n  mSafeMode=false\n"
                f"  mPendingTraversal=false\n  mGlobalDisplayState={'ON' if self._awake() else 'OFF'}\n"
                f"  mNextNonDefaultDisplayId=1\n  mViewports=[DisplayViewport{{type=INTERNAL, valid=true, "
                f"isActive=true, displayId=0, uniqueId='local:0', physicalPort=0, orientation=0, logicalFrame="
                f"{frame}, physicalFrame={frame}, deviceWidth={width}, deviceHeight={height}}}]\n"
                f"  mDefaultDisplayDefaultColorMode=0\n\nDisplay Adapters: size=1\n  LocalDisplayAdapter\n\n"
                f"Logical Displays: size=1\n  Display 0:\n    mDisplayId=0\n    mLayerStack=0\n"
                f"    mHasContent=true\n    mRequestedColorMode=0\n    mDisplayOffset=(0, 0)\n"
                f"    mPrimaryDisplayDevice=Built-in Screen\n    mBaseDisplayInfo={info}\n"
                f"    mOverrideDisplayInfo={info}\n")

    def _awake(self) -> bool:
        return self.phone.device.state.screen_on

    def _dump_power(self, args: list[str]) -> str:
        awake, st = self._awake(), self.phone.device.state
        return (f"POWER MANAGER (dumpsys power)\n\nPower Manager State:\n  mDirty=0x0\n"
                f"  mWakefulness={'Awake' if awake else 'Asleep'}\n  mWakefulnessChanging=false\n"
                f"  mIsPowered={str(st.charging).lower()}\n  mPlugType={int(st.charging)}\n"
                f"  mBatteryLevel={st.battery_level}\n"
                f"  mBatteryLevelWhenDreamStarted=0\n  mDockState=0\n  mStayOn=false\n  mProximityPositive=false\n"
                f"  mBootCompleted=true\n  mSystemReady=true\n  mHoldingWakeLockSuspendBlocker=false\n"
                f"  mHoldingDisplaySuspendBlocker={'true' if awake else 'false'}\n"
                f"  mDisplayReady=true\n  mScreenBrightnessSetting={self.phone.device.state.brightness}\n\n"
                f"Display Power: state={'ON' if awake else 'OFF'}\n")

    def _dump_input_method(self, args: list[str]) -> str:
        st = self.phone.device.state
        shown = st.focus is not None
        ime = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"
        client = apps()[st.focus[0]].package if shown and st.focus[0] in apps() else LAUNCHER_PKG
        return (f"Current Input Method Manager state:\n  mCurMethodId={ime}\n  mCurrentSubtype=null\n"
                f"  mCurFocusedWindowClient={'ClientState{' + client + '}' if shown else 'null'}\n"
                f"  mCurId={ime} mHaveConnection={'true' if shown else 'false'} mBoundToMethod=true "
                f"mVisibleBound={'true' if shown else 'false'}\n  mShowRequested={'true' if shown else 'false'} "
                f"mShowExplicitlyRequested=false mShowForced=false mInputShown={'true' if shown else 'false'}\n"
                f"  mInFullscreenMode=false\n  mSystemReady=true mInteractive={'true' if self._awake() else 'false'}\n")

    def _dump_battery(self, args: list[str]) -> str:
        st = self.phone.device.state
        # BatteryManager's status: 2 charging, 3 discharging, 5 full (on power at 100%)
        status = (5 if st.battery_level == 100 else 2) if st.charging else 3
        return (f"Current Battery Service state:\n  AC powered: {str(st.charging).lower()}\n"
                "  USB powered: false\n  Wireless powered: false\n  Max charging current: 0\n"
                "  Max charging voltage: 0\n  Charge counter: 10000\n"
                f"  status: {status}\n  health: 2\n  present: true\n  level: {st.battery_level}\n  scale: 100\n"
                "  voltage: 5000\n  temperature: 250\n  technology: Li-ion\n")

    def _battery_command(self, io: _Io, args: list[str]) -> int:
        """``dumpsys battery set level N | set ac 0|1 | set status N | unplug | reset``: BatteryService's shell
        commands, which override what the battery reports (the emulator builder gives a snapshot its battery so)."""
        st = self.phone.device.state
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
            with self.phone.lock:
                if args[1] == "level":
                    st.battery_level = min(max(value, 0), 100)
                elif args[1] == "ac":
                    st.charging = value != 0
                self.phone.device._invalidate()
        elif args[0] == "unplug":
            with self.phone.lock:
                st.charging = False
                self.phone.device._invalidate()
        return 0  # reset: the simulated battery has nothing else to report than what was set

    def _dump_package(self, args: list[str]) -> str:
        """``dumpsys package NAME``: the package's record; for a package the phone does not have, nothing, as on
        Android (which then prints only the headers of its tables)."""
        names = [a for a in args if not a.startswith("-")]
        if not names or names[0] not in PACKAGES:
            return ""
        name, info = names[0], PACKAGES[names[0]]
        key = next((k for k, a in apps().items() if a.package == name), None)
        uid = app_uid(key) if key is not None else info["uid"]
        stamp = "2008-12-31 16:00:00"  # system apps keep the build's fixed install time
        return (f"Packages:\n  Package [{name}] ({zlib.crc32(name.encode()) & 0xFFFFFFF:x}):\n    userId={uid}\n"
                f"    pkg=Package{{{zlib.crc32(b'p' + name.encode()) & 0xFFFFFFF:x} {name}}}\n"
                f"    codePath={info['codePath']}\n    resourcePath={info['codePath']}\n"
                f"    versionCode={info['versionCode']} minSdk={SDK} targetSdk={SDK}\n"
                f"    versionName={info['versionName']}\n    splits=[base]\n    apkSigningVersion=3\n"
                f"    flags=[ SYSTEM HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]\n    timeStamp={stamp}\n"
                f"    firstInstallTime={stamp}\n    lastUpdateTime={stamp}\n    installerPackageName=null\n"
                f"    User 0: ceDataInode=0 installed=true hidden=false suspended=false stopped=false "
                f"notLaunched=false enabled=0 instant=false virtual=false\n")
