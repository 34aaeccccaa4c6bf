"""Keep fixed code within the file's line length, split the way black splits.

Rewrites build new expressions as one line (``self.register_buffer("inv_freq",
torch.where(cond, a, b), persistent=False)``). After the rewrites are applied, every
statement whose rendered text has a line over the limit that the original did not have
is split at its last bracket, as black's right-hand split does:

1. the bracket's contents go on one line of their own, one indent deeper, and the
   closing bracket on the next line at the statement's indentation;
2. if that line is still too long and the bracket is a call's, each argument gets its own
   line, with a trailing comma, and an argument that is still too long is split the same
   way, one level deeper; a parenthesized expression whose contents are too long is split
   at its own last bracket.

A value with no bracket at its end (``y = x if ... else ref``, ``return a + b.sum()``) is
put in parentheses of its own, its contents on one line one indent deeper, and if that is
still too long, one operand a line (``if`` / ``else`` or the operators starting the lines),
as black does.

Lines that were already in the source are never touched, nor statements that already
span several lines, and a statement that cannot be brought within the limit is split as
far as it goes. A trailing pragma comment (``type: ignore``, noqa...) does not count
towards a line's width, as in ruff's formatter: a fix does not move it off its line.
"""

from __future__ import annotations

import re

import libcst as cst

#: The start of a pragma comment (noqa, ``type: ignore``, pyright, pylint...): as ruff's
#: formatter does, its width is not counted, so that a fix never moves it off its line.
_PRAGMA = re.compile(r"#\s*(?:(?i:noqa)\b|type:|ty:|pyright:|pylint:|ruff:|nosec\b|nosync:)")


def wrap_new_long_lines(original: cst.Module, fixed: cst.Module, limit: int) -> cst.Module:
    """``fixed`` with its new over-long statements split (see the module docstring)."""
    if limit <= 0:
        return fixed
    old_lines = {line.strip() for line in original.code.splitlines()}
    new_long = {line.strip() for line in fixed.code.splitlines()
                if len(line.expandtabs()) > limit and line.strip() not in old_lines}
    if not new_long:
        return fixed
    return fixed.visit(_Wrapper(fixed, limit, new_long))


class _Wrapper(cst.CSTTransformer):
    def __init__(self, module: cst.Module, limit: int, new_long: set[str]) -> None:
        super().__init__()
        self.module = module
        self.limit = limit
        self.new_long = new_long
        self.indents: list[str] = []

    # -- indentation -------------------------------------------------------------------------

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.indents.append(node.indent if node.indent is not None
                            else self.module.default_indent)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock,
                            updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        self.indents.pop()
        return updated_node

    # -- statements --------------------------------------------------------------------------

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine) -> cst.BaseStatement:
        if len(updated_node.body) != 1:
            return updated_node
        bare = updated_node.with_changes(leading_lines=())
        text = self.module.code_for_node(bare)
        if "\n" in text.rstrip("\n") or not self._too_long(text):
            return updated_node
        measured = _without_pragma(bare)
        if measured is not bare and self._fits(self.module.code_for_node(measured)):
            return updated_node
        small = updated_node.body[0]
        value = _value_of(small)
        if value is None:
            return updated_node
        wrapped = self._fit(value, lambda v: self.module.code_for_node(
            measured.with_changes(body=[_with_value(small, v)])))
        if wrapped is value:
            return updated_node
        return updated_node.with_changes(body=[_with_value(small, wrapped)])

    def leave_If(self, original_node: cst.If, updated_node: cst.If) -> cst.If:
        return self._header(updated_node)  # type: ignore[return-value]

    def leave_While(self, original_node: cst.While, updated_node: cst.While) -> cst.While:
        return self._header(updated_node)  # type: ignore[return-value]

    def _header(self, node: cst.If | cst.While) -> cst.If | cst.While:
        def render(test: cst.BaseExpression) -> str:
            if isinstance(node, cst.If):
                keyword, before, after = "if", node.whitespace_before_test, \
                    node.whitespace_after_test
            else:
                keyword, before, after = "while", node.whitespace_after_while, \
                    node.whitespace_before_colon
            code = self.module.code_for_node(test)
            return f"{keyword}{self.module.code_for_node(before)}{code}" \
                   f"{self.module.code_for_node(after)}:\n"

        text = render(node.test)
        if "\n" in text.rstrip("\n") or not self._too_long(text):
            return node
        test = node.test
        if isinstance(test, cst.BooleanOperation) and not test.lpar and (
                _last_bracket(test) is None):
            test = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            if isinstance(node, cst.If):
                node = node.with_changes(whitespace_before_test=cst.SimpleWhitespace(" "))
            else:
                node = node.with_changes(whitespace_after_while=cst.SimpleWhitespace(" "))
            test = _hug(_split_operators(test, self.module.default_indent),
                        self.module.default_indent, "")
            return node.with_changes(test=test)
        wrapped = self._fit(test, render)
        return node if wrapped is test else node.with_changes(test=wrapped)

    # -- splitting ---------------------------------------------------------------------------

    @property
    def _indent(self) -> str:
        return "".join(self.indents)

    def _too_long(self, text: str, *, only_new: bool = True) -> bool:
        lines = text.rstrip("\n").split("\n")
        first = self._indent + lines[0]
        if only_new and first.strip() not in self.new_long:
            return False
        return not self._fits(text)

    def _fits(self, text: str) -> bool:
        # Continuation lines start with the block's indentation too (``indent=True``),
        # which a statement rendered on its own does not show.
        lines = text.rstrip("\n").split("\n")
        return all(len((self._indent + line).expandtabs()) <= self.limit for line in lines)

    def _fit(self, value: cst.BaseExpression, render) -> cst.BaseExpression:  # type: ignore
        """``value`` split at its last bracket, as far as needed for ``render`` to fit."""
        best = value
        candidates = self._splits(value, 1, lambda v: render(v)) if _last_bracket(
            value) is not None else _bracketed(value, self.module.default_indent)
        for candidate in candidates:
            best = candidate
            if self._fits(render(candidate)):
                break
        return best

    def _splits(self, value: cst.BaseExpression, level: int, render):  # type: ignore
        """Ever finer splits of ``value``'s last bracket, its contents ``level`` deep."""
        target = _last_bracket(value)
        if target is None:
            return
        indent = self.module.default_indent
        hugged = _hug(target, indent * level, indent * (level - 1))
        yield _swap(value, target, hugged)
        if isinstance(target, _DISPLAYS):
            return  # black would go on to one element a line: left as it is
        if not isinstance(target, cst.Call):
            inner = target.with_changes(lpar=[], rpar=[])
            if isinstance(inner, cst.BooleanOperation):  # black: one operand a line
                split = _split_operators(inner, indent * level)
                yield _swap(value, target, _hug(split.with_changes(
                    lpar=target.lpar, rpar=target.rpar), indent * level, indent * (level - 1)))
            for finer in self._splits(inner, level + 1, None):
                split = _hug(finer.with_changes(lpar=target.lpar, rpar=target.rpar),
                             indent * level, indent * (level - 1))
                yield _swap(value, target, split)
            return
        if len(target.args) == 1 and not target.args[0].star:
            # One argument: black splits the argument itself, with no trailing comma.
            arg = target.args[0]
            for finer in self._splits(arg.value, level + 1, None):
                yield _swap(value, target, _hug(target.with_changes(
                    args=[arg.with_changes(value=finer)]), indent * level, indent * (level - 1)))
        exploded = _explode(target, indent * level, indent * (level - 1))
        yield _swap(value, target, exploded)
        # Split the arguments that are still too long, one level deeper.
        args = list(exploded.args)
        for i, arg in enumerate(args):
            line = indent * level + self.module.code_for_node(
                arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)) + ","
            if len(self._indent + line) <= self.limit:
                continue
            finer_value = None
            for finer_value in self._splits(arg.value, level + 1, None):
                text = self.module.code_for_node(finer_value)
                if all(len(self._indent + indent * level + ln) <= self.limit
                       for ln in text.split("\n")):
                    break
            if finer_value is not None:
                args[i] = arg.with_changes(value=finer_value)
        yield _swap(value, target, exploded.with_changes(args=args))


def _bracketed(value: cst.BaseExpression, indent: str):  # type: ignore[no-untyped-def]
    """A value with no bracket at its end (``x if ... else y``, ``a + b + c.sum()``), as
    black splits it: in parentheses of its own, its contents on one line one indent
    deeper; then, if that is still too long, one operand a line (``if`` / ``else``, or the
    chain's operators, starting the lines)."""
    if not isinstance(value, (cst.IfExp, cst.BinaryOperation, cst.BooleanOperation)) or (
            value.lpar):
        return
    wrapped = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    yield _hug(wrapped, indent, "")
    if isinstance(value, cst.IfExp):
        split: cst.BaseExpression = value.with_changes(
            whitespace_before_if=_newline(indent), whitespace_after_if=cst.SimpleWhitespace(" "),
            whitespace_before_else=_newline(indent),
            whitespace_after_else=cst.SimpleWhitespace(" "))
    elif isinstance(value, cst.BooleanOperation):
        split = _split_operators(value, indent)
    else:
        split = _split_binary(value, indent)
    yield _hug(split.with_changes(lpar=wrapped.lpar, rpar=wrapped.rpar), indent, "")


def _split_binary(node: cst.BinaryOperation, indent: str) -> cst.BinaryOperation:
    """``a + b - c`` with each operator of the chain's left spine starting a line."""
    left = node.left
    if isinstance(left, cst.BinaryOperation) and not left.lpar and (
            type(left.operator) is type(node.operator)
            or {type(left.operator), type(node.operator)} <= {cst.Add, cst.Subtract}):
        left = _split_binary(left, indent)
    operator = node.operator.with_changes(whitespace_before=_newline(indent),
                                          whitespace_after=cst.SimpleWhitespace(" "))
    return node.with_changes(left=left, operator=operator)


def _value_of(small: cst.BaseSmallStatement) -> cst.BaseExpression | None:
    if isinstance(small, (cst.Expr, cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Return)):
        return small.value
    return None


def _with_value(small: cst.BaseSmallStatement,
                value: cst.BaseExpression) -> cst.BaseSmallStatement:
    return small.with_changes(value=value)


def _last_bracket(expr: cst.BaseExpression) -> cst.Call | cst.BaseExpression | None:
    """The node whose closing bracket ends ``expr``: a call with arguments, or a
    parenthesized expression; empty calls (``.tolist()``) are looked through."""
    node: cst.BaseExpression | None = expr
    while node is not None:
        if getattr(node, "lpar", None) and node is not expr:
            return node
        if isinstance(node, _DISPLAYS):
            return node
        if isinstance(node, cst.Call):
            if node.args:
                return node
            node = node.func
        elif isinstance(node, cst.Attribute):
            node = node.value
        elif isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, (cst.BinaryOperation, cst.BooleanOperation)):
            node = node.right
        elif isinstance(node, cst.Comparison):
            node = node.comparisons[-1].comparator
        elif isinstance(node, cst.UnaryOperation):
            node = node.expression
        else:
            return None
    return None


#: Bracketed displays and comprehensions: ``[...]``, ``{...}``.
_DISPLAYS = (cst.List, cst.ListComp, cst.Set, cst.SetComp, cst.Dict, cst.DictComp)


def _newline(indent: str) -> cst.ParenthesizedWhitespace:
    return cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), empty_lines=[],
                                       indent=True, last_line=cst.SimpleWhitespace(indent))


def _hug(node: cst.BaseExpression, inner: str, outer: str) -> cst.BaseExpression:
    """The contents of ``node``'s last bracket on their own line."""
    if isinstance(node, cst.Call):
        args = list(node.args)
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT,
                                         whitespace_after_arg=_newline(outer))
        return node.with_changes(whitespace_before_args=_newline(inner), args=args)
    if isinstance(node, _DISPLAYS):
        opening = "lbracket" if hasattr(node, "lbracket") else "lbrace"
        closing = "rbracket" if opening == "lbracket" else "rbrace"
        return node.with_changes(**{
            opening: getattr(node, opening).with_changes(whitespace_after=_newline(inner)),
            closing: getattr(node, closing).with_changes(whitespace_before=_newline(outer))})
    lpar, rpar = list(node.lpar), list(node.rpar)  # type: ignore[attr-defined]
    lpar[-1] = lpar[-1].with_changes(whitespace_after=_newline(inner))
    rpar[0] = rpar[0].with_changes(whitespace_before=_newline(outer))
    return node.with_changes(lpar=lpar, rpar=rpar)


def _explode(call: cst.Call, inner: str, outer: str) -> cst.Call:
    """One argument per line, with a trailing comma (black's "magic trailing comma")."""
    args = []
    for i, arg in enumerate(call.args):
        last = i == len(call.args) - 1
        after = _newline(outer if last else inner)
        args.append(arg.with_changes(comma=cst.Comma(whitespace_after=after),
                                     whitespace_after_arg=cst.SimpleWhitespace("")))
    return call.with_changes(whitespace_before_args=_newline(inner), args=args)


def _split_operators(node: cst.BooleanOperation, indent: str) -> cst.BooleanOperation:
    """``a and b and c`` with each operator starting a line (the chain's left spine)."""
    left = node.left
    if isinstance(left, cst.BooleanOperation) and not left.lpar:
        left = _split_operators(left, indent)
    operator = node.operator.with_changes(whitespace_before=_newline(indent),
                                          whitespace_after=cst.SimpleWhitespace(" "))
    return node.with_changes(left=left, operator=operator)


def _swap(root: cst.BaseExpression, old: cst.CSTNode, new: cst.CSTNode) -> cst.BaseExpression:
    if root is old:
        return new  # type: ignore[return-value]
    return root.deep_replace(old, new)  # type: ignore[return-value]


def _without_pragma(statement: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
    """``statement`` with its trailing comment cut before the first pragma in it (all of
    it for ``# noqa: F401``, the pragma part of ``# why  # type: ignore``), for measuring
    its width; ``statement`` itself when it has none."""
    trailing = statement.trailing_whitespace
    comment = trailing.comment
    pragma = _PRAGMA.search(comment.value) if comment is not None else None
    if comment is None or pragma is None:
        return statement
    kept = comment.value[:pragma.start()].rstrip()
    if not kept:
        trailing = trailing.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)
    else:
        trailing = trailing.with_changes(comment=cst.Comment(kept))
    return statement.with_changes(trailing_whitespace=trailing)
