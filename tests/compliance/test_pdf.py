"""PDFs are written with binary (deflated) streams, not ASCII85 on top: reportlab's encoder is
pure Python and took most of a packet PDF's time (bench/bench_records_year.py)."""

from __future__ import annotations

import io

from PIL import Image as PilImage

from ms4watch.compliance import pdf


def test_a_pdf_with_a_chart_has_no_ascii85_streams():
    buf = io.BytesIO()
    PilImage.new("RGB", (200, 100), (200, 30, 30)).save(buf, format="PNG")
    doc = pdf.build([pdf.para("a chart", pdf.styles()["p"]), pdf.image(buf.getvalue())], title="t", footer="f")
    assert doc.startswith(b"%PDF") and b"/FlateDecode" in doc
    assert b"ASCII85Decode" not in doc
