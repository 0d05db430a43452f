"""What an Android 10 phone is, independent of how it is simulated or reached: the snapshot schema and its
validation (:mod:`~vlui.android.snapshot`, with the device profiles), locales and their strings
(:mod:`~vlui.android.i18n`), the apps and their components (:mod:`~vlui.android.apps`), the implicit intents they
resolve (:mod:`~vlui.android.intents`), resource ids (:mod:`~vlui.android.ids`), key codes
(:mod:`~vlui.android.keys`), the launcher's grid, layouts and database (:mod:`~vlui.android.launcher`), the log's line
format and buffer (:mod:`~vlui.android.logcat`) and the state a phone keeps between touches
(:mod:`~vlui.android.state`: the system's; each app's own is typed in the app's module in :mod:`vlui.sim.apps` and
kept there by app key).

The simulated phone (:mod:`vlui.sim`), the ADB backend (:mod:`vlui.adb`), the task detectors (:mod:`vlui.tasks`) and
the expert import it; it imports nothing of vlui but :mod:`vlui.errors`."""
