"""What a terminal shows after a program's output: a screen (ECMA-48, as a VT100 and xterm do it) that knows text, the
carriage return, the line feed (a pseudo-terminal's ONLCR makes it a new line; a test's stream is read the same way)
and the few control sequences a live display needs: the cursor up (CSI n A) and erasing (CSI J, CSI K, n 0-2). Any
other escape fails the test, naming it: what the program sends is then one this screen would misread. The screen
never scrolls away: line 0 is the program's first."""

from __future__ import annotations

import re

# A control sequence: ESC [, parameters, one final letter; anything else after ESC is unknown here.
_SEQUENCE = re.compile(r"\x1b\[([0-9;]*)([A-Za-z])")


def screen(output: str) -> list[str]:
    """The lines a terminal shows once `output` is written to it, trailing blank lines dropped."""
    lines: list[str] = [""]
    row = col = 0
    at = 0
    while at < len(output):
        char = output[at]
        if char == "\x1b":
            found = _SEQUENCE.match(output, at)
            if found is None or found.group(2) not in "AJK":
                raise AssertionError(f"an escape this terminal does not know at {at}: {output[at : at + 12]!r}")
            number = int(found.group(1) or 0)
            if found.group(2) == "A":
                row = max(0, row - max(1, number))
            elif found.group(2) == "J":  # 0: the cursor to the screen's end (what the display uses)
                assert number == 0, found.group(0)
                lines[row] = lines[row][:col]
                del lines[row + 1 :]
            else:  # K: 0 to the line's end, 1 from its start, 2 the whole line
                lines[row] = {0: lines[row][:col], 1: " " * col + lines[row][col:], 2: ""}[number]
            at = found.end()
            continue
        if char == "\n":
            row, col = row + 1, 0
        elif char == "\r":
            col = 0
        else:
            lines[row] = lines[row].ljust(col)[:col] + char + lines[row][col + 1 :]
            col += 1
        while len(lines) <= row:
            lines.append("")
        at += 1
    while lines and not lines[-1].strip():
        lines.pop()
    return lines
