"""PDF documents with reportlab (pure Python wheels, no system library): a few styles and a
document builder. Built with reportlab's ``invariant`` mode, so a document made twice from
the same records is byte-identical (no creation time, no random document id)."""

from __future__ import annotations

import io
from html import escape
from typing import Any, Sequence

from reportlab import rl_config
from reportlab.lib import colors
from reportlab.lib.pagesizes import letter
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import inch
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Flowable, Image, KeepTogether, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle
from reportlab.platypus.doctemplate import BaseDocTemplate

# Streams deflated, not also ASCII85-encoded: reportlab's pure-Python encoder took ~60 ms of
# a packet with a chart (the chart's pixels), and the file is a fifth smaller. A PDF is a
# binary file everywhere it goes (downloads, zip packets, email attachments).
rl_config.useA85 = 0


def styles() -> dict[str, ParagraphStyle]:
    base = getSampleStyleSheet()
    return {
        "title": ParagraphStyle("title", parent=base["Title"], fontSize=15, spaceAfter=6),
        "h": ParagraphStyle("h", parent=base["Heading3"], fontSize=10.5, spaceBefore=8, spaceAfter=3),
        "p": ParagraphStyle("p", parent=base["BodyText"], fontSize=9.5, leading=12.5),
        "small": ParagraphStyle("small", parent=base["BodyText"], fontSize=8, leading=10, textColor=colors.grey),
        "quote": ParagraphStyle("quote", parent=base["BodyText"], fontSize=8.5, leading=11, leftIndent=14,
                                textColor=colors.HexColor("#333333")),
        "cell": ParagraphStyle("cell", parent=base["BodyText"], fontSize=7.5, leading=9),
    }


def para(text: str, style: ParagraphStyle) -> Paragraph:
    """A paragraph of plain text (escaped: a name with '&' or '<' prints as typed)."""
    return Paragraph(escape(text).replace("\n", "<br/>"), style)


def table(rows: Sequence[Sequence[Any]], widths: Sequence[float] | None = None, header: bool = True) -> Table:
    st = styles()["cell"]
    data = [[para("" if c is None else str(c), st) for c in r] for r in rows]
    t = Table(data, colWidths=widths, repeatRows=1 if header else 0)
    t.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.25, colors.grey),
                           ("VALIGN", (0, 0), (-1, -1), "TOP"),
                           *([("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8eef3"))] if header else [])]))
    return t


def image(png: bytes, width_in: float = 6.5) -> Image:
    from reportlab.lib.utils import ImageReader
    reader = ImageReader(io.BytesIO(png))
    w, h = reader.getSize()
    return Image(io.BytesIO(png), width=width_in * inch, height=width_in * inch * h / w)


def build(story: list[Flowable], *, title: str, footer: str) -> bytes:
    buf = io.BytesIO()

    def on_page(canvas: Canvas, doc: BaseDocTemplate) -> None:
        canvas.saveState()
        canvas.setFont("Helvetica", 7.5)
        canvas.setFillColor(colors.grey)
        canvas.drawString(0.75 * inch, 0.5 * inch, footer)
        canvas.drawRightString(letter[0] - 0.75 * inch, 0.5 * inch, f"page {doc.page}")
        canvas.restoreState()

    doc = SimpleDocTemplate(buf, pagesize=letter, leftMargin=0.75 * inch, rightMargin=0.75 * inch,
                            topMargin=0.7 * inch, bottomMargin=0.8 * inch, title=title, author="ms4watch",
                            invariant=1)
    doc.build(story, onFirstPage=on_page, onLaterPages=on_page)
    return buf.getvalue()


__all__ = ["styles", "para", "table", "image", "build", "Flowable", "Spacer", "KeepTogether", "inch"]
