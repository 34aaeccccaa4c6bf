"""The rules as a LibCST codemod command.

    python -m libcst.tool codemod -x nosync_fix.codemod.NoSyncFix path/
    python -m libcst.tool codemod -x nosync_fix.codemod.NoSyncFix --unsafe-fixes path/

The command runs the same engine as ``nosync-fix`` (selection, hot paths,
fixed-point passes, validation) on each module LibCST hands it, and reports
the findings that remain as codemod warnings.
"""

from __future__ import annotations

import argparse

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext, SkipFile

from .config import Settings
from .engine import process_source


class NoSyncFix(CodemodCommand):
    """Remove host reads of device values (syncs and graph breaks) from PyTorch code."""

    DESCRIPTION: str = __doc__  # type: ignore[assignment]

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument("--unsafe-fixes", action="store_true",
                                help="Also apply fixes marked unsafe.")
        arg_parser.add_argument("--select", default="ALL",
                                help="Comma-separated rule codes or prefixes to enable.")
        arg_parser.add_argument("--ignore", default="",
                                help="Comma-separated rule codes or prefixes to disable.")
        arg_parser.add_argument("--all-paths", action="store_true",
                                help="Also fix reads outside hot paths.")

    def __init__(self, context: CodemodContext, unsafe_fixes: bool = False,
                 select: str = "ALL", ignore: str = "", all_paths: bool = False) -> None:
        super().__init__(context)
        self.settings = Settings(
            select=tuple(s for s in select.split(",") if s),
            ignore=tuple(s for s in ignore.split(",") if s),
            unsafe_fixes=unsafe_fixes,
            all_paths=all_paths,
        ).validate()

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        filename = self.context.filename or "<string>"
        result = process_source(tree.bytes, filename, self.settings, fix=True, with_edits=False)
        if result.error is not None:
            raise SkipFile(result.error.message)
        for finding in result.findings:
            self.warn(f"{finding.line}:{finding.column}: {finding.code} {finding.message}")
        if not result.changed:
            return tree
        return cst.parse_module(result.fixed_bytes)
