"""An app's shared-preferences file as Android 10 writes it (``/data/data/<package>/shared_prefs/<name>.xml``).

SharedPreferencesImpl keeps the entries in a ``java.util.HashMap`` and writes them with ``XmlUtils.writeMapXml`` in
the map's iteration order: by bucket (the key's ``String.hashCode`` spread as ``h ^ (h >>> 16)``, masked by the
table's size), and within a bucket in the order the keys went in. The order is no whim of the simulator: a reader
that takes "the file's last entry" (as B-MoCA's Wikipedia evaluators do) depends on it. The table starts at 16
buckets and doubles whenever the entries pass three quarters of it; a key that is already there keeps its place.
Treeified buckets (eight keys or more in one bucket) are not modelled.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

HEADER = "<?xml version='1.0' encoding='utf-8' standalone='yes' ?>"


def java_string_hash(s: str) -> int:
    """``String.hashCode()`` as an unsigned 32-bit number (UTF-16 code units)."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def table_size(entries: int) -> int:
    """The bucket count of a HashMap that grew from 16 to hold ``entries`` keys (load factor 0.75)."""
    size = 16
    while entries > size * 3 // 4:
        size *= 2
    return size


def hashmap_order(keys: list[str]) -> list[str]:
    """``keys`` (in the order they went into the map) in the order a HashMap iterates over them."""
    mask = table_size(len(keys)) - 1

    def bucket(key: str) -> int:
        h = java_string_hash(key)
        return (h ^ (h >> 16)) & mask

    return sorted(keys, key=bucket)  # stable: a bucket keeps the order its keys went in


def prefs_xml(entries: dict[str, bool | int | str]) -> str:
    """The file for ``entries`` (name: value, in the order they were first put): ``<boolean>``, ``<int>`` or
    ``<string>`` elements, one a line, indented by four spaces, as FastXmlSerializer writes them; an empty map is
    ``<map />``."""
    if not entries:
        return f"{HEADER}\n<map />\n"
    lines = [HEADER, "<map>"]
    for name in hashmap_order(list(entries)):
        value = entries[name]
        if isinstance(value, bool):
            lines.append(f"    <boolean name={quoteattr(name)} value=\"{str(value).lower()}\" />")
        elif isinstance(value, int):
            lines.append(f"    <int name={quoteattr(name)} value=\"{value}\" />")
        else:
            lines.append(f"    <string name={quoteattr(name)}>{escape(value)}</string>")
    lines.append("</map>")
    return "\n".join(lines) + "\n"
