"""What the sections' rules are written with: one problem per broken rule, naming the key, the value and what is
allowed (a key that already failed is not reported again), and the prefixes of the warnings main.py frames."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from model.problems import Problems


def check(problems: Problems, key: str, value: Any, ok: bool, allowed: str) -> None:
    if not ok and not problems.is_bad(key):
        problems.add(key, value, allowed)


def check_each(problems: Problems, key: str, items: tuple[str, ...], ok: Callable[[str], bool], allowed: str) -> None:
    """One problem per bad item of a list, each named by its index: `key[i]`."""
    for i, item in enumerate(items):
        check(problems, f"{key}[{i}]", item, ok(item), allowed)


def is_network(cidr: str) -> bool:
    try:
        ipaddress.IPv4Network(cidr)
    except ValueError:
        return False
    return True


def covers_the_internet(cidrs: Iterable[str]) -> bool:
    """The valid networks among `cidrs`, merged, are 0.0.0.0/0 (however it is split: two /1s count too)."""
    networks = [ipaddress.IPv4Network(cidr) for cidr in cidrs if is_network(cidr)]
    return ipaddress.IPv4Network("0.0.0.0/0") in ipaddress.collapse_addresses(networks)


def as_shown(value: Any) -> Any:
    """A setting's value as a message shows it (a read-only mapping as the object it came from)."""
    return dict(value) if isinstance(value, Mapping) else value


def minor(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


# A warning that starts so is about a door open to the internet: main.py frames it so it cannot be missed.
LOUD = "OPEN TO THE INTERNET: "
# ... or about a serving colour that one push can change together with the others: framed the same way.
MOVING = "ONE PUSH REACHES A SERVING COLOUR: "
LOUD_PREFIXES = (LOUD, MOVING)
