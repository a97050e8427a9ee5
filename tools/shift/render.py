"""The report's two renderers of one layout (tools/shift/chart.py): a self-contained HTML page, each chart an inline SVG
(no script, no stylesheet or font to fetch: it opens from a workflow's artifact or a mail), and a PNG of the same
shapes drawn with Pillow, for a pull-request comment. Neither decides anything about the charts."""

from __future__ import annotations

import html as markup
import itertools
from pathlib import Path
from typing import Any

from tools.shift.chart import Dot, Drawn, Line, Page, Shape, Text

DASH = 5  # pixels on, then off, of a dashed line
_PIL_ANCHOR = {"start": "ls", "middle": "ms", "end": "rs"}  # Pillow's: left/middle/right, at the baseline


def html(page: Page) -> str:
    charts = "\n".join(_svg(chart, page.width) for chart in page.charts)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{markup.escape(page.title)}</title>\n"
        "<style>body { margin: 16px; background: #fff; } svg { display: block; }</style>\n"
        f"</head>\n<body>\n{charts}\n</body>\n</html>\n"
    )


def _svg(chart: Drawn, width: int) -> str:
    key = markup.escape(chart.key, quote=True)
    shapes = "".join(_svg_shape(shape) for shape in chart.shapes)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {chart.kind}" data-key="{key}" width="{width}" '
        f'height="{chart.height}" viewBox="0 0 {width} {chart.height}" font-family="sans-serif">{shapes}</svg>'
    )


def _svg_shape(shape: Shape) -> str:
    if isinstance(shape, Line):
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in shape.points)
        dash = f' stroke-dasharray="{DASH}"' if shape.dashed else ""
        return f'<polyline points="{points}" fill="none" stroke="{shape.colour}" stroke-width="{shape.width}"{dash}/>'
    if isinstance(shape, Dot):
        return f'<circle cx="{shape.x:.1f}" cy="{shape.y:.1f}" r="{shape.r}" fill="{shape.colour}"/>'
    text = markup.escape(shape.text)
    return (
        f'<text x="{shape.x:.1f}" y="{shape.y:.1f}" font-size="{shape.size}" fill="{shape.colour}" '
        f'text-anchor="{shape.anchor}">{text}</text>'
    )


def png(page: Page, path: Path) -> None:
    from PIL import Image, ImageDraw, ImageFont  # only for a report: Pillow takes a moment to load, --help must not

    image = Image.new("RGB", (page.width, page.height), "white")
    draw = ImageDraw.Draw(image)
    fonts: dict[int, Any] = {}
    top = 0
    for chart in page.charts:
        for shape in chart.shapes:
            if isinstance(shape, Line):
                points = [(x, y + top) for x, y in shape.points]
                for a, b in itertools.pairwise(points):
                    for segment in _dashes(a, b) if shape.dashed else [(a, b)]:
                        draw.line(segment, fill=shape.colour, width=max(1, round(shape.width)))
            elif isinstance(shape, Dot):
                r, y = shape.r, shape.y + top
                draw.ellipse((shape.x - r, y - r, shape.x + r, y + r), fill=shape.colour)
            elif isinstance(shape, Text):
                font = fonts.setdefault(shape.size, ImageFont.load_default(shape.size))
                draw.text((shape.x, shape.y + top), shape.text, fill=shape.colour, font=font, anchor=_PIL_ANCHOR[shape.anchor])
        top += chart.height
    image.save(path, "PNG")


def _dashes(a: tuple[float, float], b: tuple[float, float]) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """A segment cut into DASH-long pieces, every other one drawn (SVG's stroke-dasharray, by hand)."""
    length = ((b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2) ** 0.5
    pieces = []
    for n in range(0, int(length // DASH) + 1, 2):
        start, end = n * DASH / length if length else 0, min(1.0, (n + 1) * DASH / length) if length else 1
        pieces.append(
            (
                (a[0] + (b[0] - a[0]) * start, a[1] + (b[1] - a[1]) * start),
                (a[0] + (b[0] - a[0]) * end, a[1] + (b[1] - a[1]) * end),
            )
        )
    return pieces
