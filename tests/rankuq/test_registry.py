"""Registries: a name registered once, unknown names listing the valid ones; plugins: an installed
package's entry points in a registry's group add to it (as pip installs them: a
``*.dist-info/entry_points.txt`` on sys.path), and a broken one is one clear error."""

import sys
import textwrap

import pytest

from rankuq.errors import RankuqError
from rankuq.registry import Registry, name_of


class Bert:
    name = "bert"


class Ensemble:
    name = "ensemble"


def test_a_registry_lists_its_names_sorted_and_refuses_an_unknown_one():
    registry: Registry[type] = Registry("method")
    assert registry.register(Ensemble) is Ensemble and registry.register(Bert) is Bert
    assert registry.names() == list(registry) == ["bert", "ensemble"]
    assert registry.get("bert") is Bert and "ensemble" in registry and "sngp" not in registry
    with pytest.raises(RankuqError, match=r"^unknown method 'sngpp'; valid methods: bert, ensemble$"):
        registry.get("sngpp")


def test_a_name_is_registered_once():
    registry: Registry[type] = Registry("method")
    registry.register(Bert)
    with pytest.raises(ValueError, match="method 'bert' is registered twice"):
        registry.register(type("Other", (), {"name": "bert"}))
    assert registry.get("bert") is Bert


def test_an_object_without_a_name_is_named_after_its_module():
    def probe() -> None: ...

    probe.__module__ = "rankuq.bench.probes.calibration"  # a probe module's probe function
    assert name_of(probe) == "calibration" and name_of(Bert) == "bert"


def install(tmp_path, monkeypatch, module: str, entry_points: str):
    """A package ``myplugin`` and its distribution metadata, importable as if pip-installed."""
    (tmp_path / "myplugin.py").write_text(textwrap.dedent(module))
    info = tmp_path / "myplugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: myplugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "myplugin", raising=False)


def test_an_entry_point_adds_its_object_under_its_own_name(tmp_path, monkeypatch):
    install(
        tmp_path,
        monkeypatch,
        """
        class MyRanker:
            name = "my_ranker"
        """,
        """
        [rankuq.test_methods]
        anything = myplugin:MyRanker
        """,
    )
    registry = Registry("method", plugins="rankuq.test_methods")
    assert registry.names() == ["my_ranker"]
    assert registry.get("my_ranker").__module__ == "myplugin"


def test_an_entry_point_may_name_a_module_that_registers_itself(tmp_path, monkeypatch):
    registry = Registry("probe", plugins="rankuq.test_probes")
    monkeypatch.setitem(sys.modules, "rankuq_test_registry", type(sys)("rankuq_test_registry"))
    sys.modules["rankuq_test_registry"].REGISTRY = registry
    install(
        tmp_path,
        monkeypatch,
        """
        from rankuq_test_registry import REGISTRY

        @REGISTRY.register
        class Mine:
            name = "mine"
        """,
        """
        [rankuq.test_probes]
        mine = myplugin
        """,
    )
    assert "mine" in registry and registry.names() == ["mine"]


def test_a_broken_plugin_is_one_error_naming_it(tmp_path, monkeypatch):
    install(
        tmp_path, monkeypatch, "raise ImportError('no torch here')\n", "[rankuq.test_tasks]\nbad = myplugin\n"
    )
    with pytest.raises(RankuqError, match=r"plugin bad = myplugin .*rankuq.test_tasks.* no torch here"):
        Registry("task", plugins="rankuq.test_tasks").names()


class Base:
    name = "base"


@pytest.mark.parametrize(
    ("target", "base", "named"),
    [
        ("NUMBER", None, "names int 5, not a function or class or a module that registers one"),
        ("TEXT", None, "names str 'my_ranker', not a function or class"),
        ("INSTANCE", None, "names Ranker <myplugin.Ranker object at"),
        ("probe", Base, "names function <function probe at"),
        ("Ranker", Base, "names type <class 'myplugin.Ranker'>, not a Base class"),
    ],
)
def test_a_plugin_naming_what_cannot_be_registered_is_one_error_naming_it(
    tmp_path, monkeypatch, target, base, named
):
    """An int has no name to register it by (it used to raise AttributeError); a method plugin's
    function or foreign class would fail only when the grid runs."""
    module = "NUMBER = 5\nTEXT = 'my_ranker'\nclass Ranker:\n    name = 'my_ranker'\nINSTANCE = Ranker()\n"
    install(
        tmp_path,
        monkeypatch,
        module + "def probe():\n    pass\n",
        f"[rankuq.test_bad]\nbad = myplugin:{target}\n",
    )
    with pytest.raises(RankuqError) as raised:
        Registry("method", plugins="rankuq.test_bad", base=base).names()
    message = str(raised.value)
    assert message.startswith(f"plugin bad = myplugin:{target} (entry point group rankuq.test_bad) {named}")
    assert message.endswith("; fix or uninstall that package") and "\n" not in message


def test_a_subclass_of_the_base_or_a_plugin_function_is_registered(tmp_path, monkeypatch):
    module = (
        "from tests_registry_base import Base\nclass Mine(Base):\n    name = 'mine'\ndef probe():\n    pass\n"
    )
    monkeypatch.setitem(sys.modules, "tests_registry_base", type(sys)("tests_registry_base"))
    sys.modules["tests_registry_base"].Base = Base
    install(
        tmp_path,
        monkeypatch,
        module,
        "[rankuq.test_ok]\nmine = myplugin:Mine\n[rankuq.test_fn]\nprobe = myplugin:probe\n",
    )
    assert Registry("method", plugins="rankuq.test_ok", base=Base).names() == ["mine"]
    assert Registry("probe", plugins="rankuq.test_fn").names() == ["myplugin"]  # named after its module
