"""engine._add_imports: LibCST's AddImportsVisitor without walking function and class bodies."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from nosync_fix.engine import _add_imports

MODULES = [
    "def f():\n    return 1\n",
    '"""Doc."""\nfrom __future__ import annotations\n\nimport torch\n\n\nclass A:\n    x = 1\n',
    "import os\n\n\ndef f():\n    import sys\n    return sys\n\nimport torch\n",
    "class A:\n    pass\n\n\nimport torch\nfrom nosync_fix.runtime import item\n",
    "from nosync_fix.runtime import call_in_graph\n\n\ndef f():\n    pass\n",
    "try:\n    import torch\nexcept ImportError:\n    torch = None\n\n\n"
    "@decorator\ndef f():\n    pass\n",
    "# comment\n\n@dataclass\nclass A:\n    x: int = 0\n\n\ndef __nosync_hidden_0__():\n    pass\n",
]


@pytest.mark.parametrize("source", MODULES)
def test_the_same_imports_as_libcst_adds(source: str) -> None:
    def visitor() -> AddImportsVisitor:
        context = CodemodContext()
        AddImportsVisitor.add_needed_import(context, "nosync_fix.runtime", "call_in_graph")
        AddImportsVisitor.add_needed_import(context, "torch")
        return AddImportsVisitor(context)

    module = cst.parse_module(source)
    expected = visitor().transform_module(module).code
    assert _add_imports(module, visitor()).code == expected
