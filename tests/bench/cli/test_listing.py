"""`rankuq tasks` and `rankuq methods`: the registries listed."""

from rankuq.bench.cli.main import main


def test_tasks_and_methods_list_the_registries(capsys):
    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("wikiqa", "trecqa_clean", "semeval_graded", "beir/<name>", "run"))
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    assert "mc_dropout" in out and "T=10" in out and "M=5" in out
