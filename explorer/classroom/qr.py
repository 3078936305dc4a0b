"""QR code of a join link, as SVG text (segno; pure Python, no network)."""
from __future__ import annotations

import io

import segno


def qr_svg(url: str, scale: int = 4) -> str:
    """url -> '<svg xmlns=...>...</svg>': no XML declaration, so it inlines in HTML and also works as an image."""
    out = io.BytesIO()
    segno.make(url, error="m", micro=False).save(out, kind="svg", scale=scale, xmldecl=False, nl=False,
                                                 dark="#000", light="#fff")
    return out.getvalue().decode()
