"""The checker's line reader (check_read._read_lines) reads exactly what the XML parser reads: on the
writer's files it returns the parser's result, and on every departure from the line layout it either
returns that same result or hands the text to the parser (whose refusal is then the one raised)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ocsplan.cayley import Topology
from ocsplan.deploy import program_xml
from ocsplan.deploy.check_read import _read, _read_lines, _read_parsed, _Reader
from ocsplan.schedules import SCHEDULES

TOPO = Topology(3, frozenset({1, 2, 4}))


def _xml(name: str, channels: int = 1) -> str:
    return program_xml(SCHEDULES[name].build(TOPO, 1 << 20), name, channels=channels)


def _state(reader: _Reader) -> object:
    return (reader.algo, reader.gpu_attrs,
            [[(tb.send, tb.recv, tb.chan, tb.steps, tb.signals) for tb in tbs] for tbs in reader.gpus])


def _outcome(read: Callable[[str, str], _Reader], text: str) -> object:
    try:
        return _state(read(text, "f.xml"))
    except Exception as exc:  # the outcome compared is the exception itself
        return (type(exc), str(exc))


@pytest.mark.parametrize("name", ["recursive-doubling", "rs-ag", "layered", "bruck"])
@pytest.mark.parametrize("channels", [1, 2])
def test_the_writers_files_are_read_by_lines_as_the_parser_reads_them(name: str, channels: int) -> None:
    text = _xml(name, channels)
    lined = _read_lines(text, "f.xml")
    assert lined is not None
    assert _state(lined) == _state(_read_parsed(text, "f.xml"))


def _variants(text: str) -> list[str]:
    """Departures from the line layout, each next to (or inside) the step lines."""
    first = text.index("<step ")
    line_end = text.index("\n", first)
    step = text[first:line_end]
    tb_end = text.index("</tb>")
    return [
        text.replace("<step ", "<!-- c -->\n<step ", 1),  # a comment on its own line
        text[:first] + "<!--\n" + step + "\n-->" + text[line_end:],  # a step inside a comment
        text[:first] + "<![CDATA[\n" + step + "\n]]>" + text[line_end:],  # a step inside CDATA
        text.replace('s="0" type=', 's="1" type=', 1),  # the first step's index wrong
        text.replace('s="1" type=', 's="01" type=', 1),  # an index the parser reads as 1
        text.replace('hasdep="0"/>', 'hasdep="00"/>', 1),
        text.replace('hasdep="0"/>', 'hasdep="0" />', 1),
        text.replace('cnt="1"', "cnt='1'", 1),
        text.replace('cnt="1"', 'cnt="&#49;"', 1),
        text.replace('depid="-1"', 'depid="-1" depid="-1"', 1),  # a repeated attribute
        text.replace('type="', 'kind="x" type="', 1),  # an eleventh attribute
        text.replace(' srcbuf="', '  srcbuf="', 1),
        text.replace("\n", "\r\n"),
        text.rstrip("\n"),  # no final newline
        text[:tb_end] + step + "\n" + text[tb_end:],  # a step repeated out of order
        text[:tb_end] + "</tb>\n" + step + "\n<tb>" + text[tb_end + 5:],  # a step outside any tb
        text[:first] + '<tb id="9" send="-1" recv="-1" chan="0">\n' + step + "\n</tb>\n" + text[first:],  # nested
        text.replace("<gpu ", "<tb id=\"0\" send=\"-1\" recv=\"-1\" chan=\"0\">\n</tb>\n<gpu ", 1),  # tb under algo
        text.replace("</algo>", "</algo>\n<algo>", 1),  # junk after the root
        text.replace("</tb>", "</tb >", 1),
        text.replace("<tb id=\"0\"", "<tb id=\"x\"", 1),  # the _Reader's refusal
        text.replace("<step ", "<step\n", 1),
        text.replace("\n", "\n\n"),
        text.replace('type="s"', 'type="S"', 1),
        text.replace('srcoff="0"', 'srcoff="' + "1" * 12 + '"', 1),
        text.replace('srcoff="0"', 'srcoff="\u0661"', 1),  # a non-ASCII digit int() reads
        "<algo" + "x" * 200_000 + ">\n</algo>\n",  # a line longer than a feed
        '<?xml version="1.0"?>\n' + text,
        text.replace("<algo ", "<algo\tname2=\"y\" ", 1),
    ]


@pytest.mark.parametrize("name", ["rs-ag", "bruck"])
def test_every_departure_reads_as_the_parser_reads_it(name: str) -> None:
    for k, text in enumerate(_variants(_xml(name))):
        assert _outcome(_read, text) == _outcome(_read_parsed, text), k
