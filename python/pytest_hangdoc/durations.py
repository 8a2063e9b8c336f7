"""Durations as hangdoc writes them on its command line: "30", "30s", "1.5s", "500ms", "2m", "1h"."""
import re

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h)?\s*")


def parse_duration(text):
    """Seconds in `text` (a number alone is seconds; 0 means no limit). ValueError when it is not a duration."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    else:
        match = _DURATION.fullmatch(str(text))
        if not match:
            raise ValueError(f"{text!r} is not a duration (30, 30s, 500ms, 2m, 1h)")
        seconds = float(match.group(1)) * _UNITS[match.group(2) or "s"]
    if seconds < 0 or seconds != seconds or seconds > 366 * 86400:
        raise ValueError(f"{text!r} is out of range (0 to a year)")
    return seconds


def format_duration(seconds):
    """The shortest of "500ms", "3s", "1.5s", "2m" that says `seconds`."""
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds >= 120 and seconds % 60 == 0:
        return f"{seconds / 60:.0f}m"
    return f"{seconds:g}s"
