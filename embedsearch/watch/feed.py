"""A watch run as an Atom feed (RFC 4287), written with the standard library's ElementTree: one entry a new
paper, its id a URN of the index and the paper's id, its summary the abstract."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote
from xml.etree import ElementTree as ET

from ..store.files import now

NS = "http://www.w3.org/2005/Atom"


def atom_feed(index, runs: Sequence) -> str:
    ET.register_namespace("", NS)
    feed = ET.Element(f"{{{NS}}}feed")
    stamp = now()
    names = ", ".join(r.watch.name for r in runs)
    for tag, text in (("title", f"embedsearch: {names} on {index.name}"), ("id", f"urn:embedsearch:{quote(str(index.path))}:{quote(names)}"),
                      ("updated", stamp)):
        ET.SubElement(feed, f"{{{NS}}}{tag}").text = text
    ET.SubElement(ET.SubElement(feed, f"{{{NS}}}author"), f"{{{NS}}}name").text = "embedsearch"
    for run in runs:
        for hit in run.answer:
            entry = ET.SubElement(feed, f"{{{NS}}}entry")
            ET.SubElement(entry, f"{{{NS}}}id").text = f"urn:embedsearch:{quote(str(index.path))}:{quote(hit.id)}"
            ET.SubElement(entry, f"{{{NS}}}title").text = hit.preview
            ET.SubElement(entry, f"{{{NS}}}updated").text = stamp
            ET.SubElement(entry, f"{{{NS}}}category", term=run.watch.name)
            ET.SubElement(entry, f"{{{NS}}}summary").text = hit.text
    return ET.tostring(feed, encoding="unicode", xml_declaration=True) + "\n"
