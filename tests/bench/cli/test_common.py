"""What every `rankuq` verb shares: comma-separated option values, SIGTERM as Ctrl-C, tables."""

import pytest

from rankuq.bench.cli.common import Terminated, comma_names, on_sigterm, print_table


def test_a_comma_separated_value_is_its_names_blanks_dropped():
    assert comma_names(" AP, nDCG@10 ,,R@1, ") == ["AP", "nDCG@10", "R@1"]
    assert comma_names("u_max") == ["u_max"] and comma_names(" , ") == []


def test_sigterm_raises_what_ctrl_c_raises():
    with pytest.raises(KeyboardInterrupt) as raised:
        on_sigterm(15, None)
    assert type(raised.value) is Terminated


def test_a_table_prints_its_title_header_and_rows(capsys):
    print_table("evaluation", ["metric", "value"], [["R@1", "0.5000"], ["nDCG@10", "0.7500"]])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].strip() == "evaluation"

    def row(*cells: str) -> int:
        (index,) = [i for i, line in enumerate(lines) if all(cell in line for cell in cells)]
        return index

    assert row("metric", "value") < row("R@1", "0.5000") < row("nDCG@10", "0.7500")  # in the given order
