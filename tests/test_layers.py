"""The import contract (tools/layer_graph.py): every import in the package, function-level ones included, goes
down the layers or sideways where allowed; the CLI and the TUI never import each other; the core never imports
the edges. Static, so it also covers code paths no other test runs."""

from __future__ import annotations

import textwrap

from tools import layer_graph as lg

# Imports the contract forbids that are still in the code, each in a file another change is rewriting.
# Remove an entry when its import goes; the test fails while a listed import no longer exists.
KNOWN_VIOLATIONS: set = set()  # none: a new one is fixed, not listed


def test_every_module_is_in_a_layer():
    assert [m for m in lg.modules() if lg.owner(m) is None and not lg._prefix(m, lg.STANDALONE)] == []


def test_a_top_level_module_is_not_placed_by_the_package_name():
    # The package itself is named alone: a new envdoctor/X.py must be given a layer, not fall into base.
    assert lg.owner("envdoctor") == (0, "envdoctor")
    assert lg.owner("envdoctor.brand_new_module") is None
    assert lg.owner("envdoctor.usecases.check")[0] == [n for n, _ in lg.LAYERS].index("usecases")


def test_no_import_breaks_the_layers():
    found = {(src, dst) for (src, dst) in lg.edges() if lg._why(src, dst)}
    assert found - KNOWN_VIOLATIONS == set(), "\n".join(lg.violations())
    assert KNOWN_VIOLATIONS - found == set(), "fixed: remove these from KNOWN_VIOLATIONS"


def test_the_edges_are_not_imported_by_the_core():
    edges = lg.LAYERS[-1][1]
    core = [(src, dst) for src, dst in lg.edges() if lg._prefix(dst, edges) and not lg._prefix(src, edges)]
    assert core == []


def test_the_checker_sees_nested_relative_and_string_imports(tmp_path):
    path = tmp_path / "planner.py"
    path.write_text(textwrap.dedent("""
        import json
        from . import index
        def later():
            from envdoctor.commands.fix import render
            return importlib.import_module("envdoctor.tui.app")
    """))
    known = {"envdoctor.wheels.index", "envdoctor.commands.fix", "envdoctor.tui.app"}
    got = {m for m, _line in lg.imports(path, "envdoctor.wheels.planner", known)}
    assert {"envdoctor.wheels.index", "envdoctor.commands.fix", "envdoctor.tui.app"} <= got
    assert lg._why("envdoctor.wheels.planner", "envdoctor.commands.fix") == "knowledge imports upward into edges"
    assert lg._why("envdoctor.tui.app", "envdoctor.commands.fix") == "envdoctor.tui may not import envdoctor.commands"
    assert lg._why("envdoctor.commands.fix", "envdoctor.tui.app") == "envdoctor.commands may not import envdoctor.tui"
    assert lg._why("envdoctor.probes.children.torch_child", "envdoctor.snapshot")
    assert lg._why("envdoctor.commands.fix", "envdoctor.wheels.planner") is None


def test_the_graph_names_each_package_once_by_layer():
    text = lg.render()
    assert text.startswith("edges:") and text.rstrip().splitlines()[-1].startswith("  ")
    assert "tui" in text and "commands" in text
    tui_line = next(line for line in text.splitlines() if line.strip().startswith("tui "))
    assert "commands" not in tui_line
