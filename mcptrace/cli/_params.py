"""Option values converted without Pydantic, for a quicker start of every command.

Typer (0.29, which carries its own Click) converts each value of a command's options
with a Pydantic ``TypeAdapter`` that it builds, the first time the command runs, for
each option, given or not: that imports Pydantic (~40 ms) and builds ~20 adapters for
``mcptrace lint`` (~10 ms), an eighth of a lint of a small capture. The values of
mcptrace's options are plain: a path, a string, a list of them, an Enum's choice, an
int. :class:`PlainCommand` and :class:`PlainGroup` convert those with the functions
Typer's validators call, to the same values; anything else, and any value Typer would
refuse, goes to Typer's own adapter, so that every result and every error message stay
Typer's (tests/test_cli_params.py holds them side by side). This leans on Typer's private
modules: where they are missing, :mod:`mcptrace.cli` uses Typer's own classes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, get_args

from typer import _click
from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
from typer._param_types import coerce_cli_choice, coerce_cli_path, lenient_issubclass
from typer.core import TyperCommand, TyperGroup, _TyperParameter


class _NotPlain(Exception):
    """A value this module does not convert: Typer's adapter does."""


def _leaf(
    annotation: Any, descriptor: TypeDescriptor, value: Any, param: Any, ctx: _click.Context
) -> Any:
    info = descriptor.parameter_info
    if lenient_issubclass(annotation, Enum):
        # Typer's validator for a choice is this call, whatever the value
        return coerce_cli_choice(
            value, choices=list(annotation), case_sensitive=info.case_sensitive, ctx=ctx
        )
    if annotation is str and type(value) is str:
        return value
    if annotation is int and type(value) in (int, str) and not info.clamp:
        # Pydantic reads more than digits (" 5", "1_0"): those go to it
        if type(value) is str and not (value.isascii() and value.isdigit()):
            raise _NotPlain
        number = int(value)
        if (info.min is not None and number < info.min) or (
            info.max is not None and number > info.max
        ):
            raise _NotPlain  # Typer words the refusal
        return number
    if annotation is Path and info.path_type is None and type(value) in (str, Path):
        # Typer's path check, given the Path that Pydantic makes of the text
        return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
    raise _NotPlain


def _plain(descriptor: TypeDescriptor, value: Any, param: Any, ctx: _click.Context) -> Any:
    if descriptor.parameter_info.parser is not None or descriptor.is_file:
        raise _NotPlain
    if descriptor.is_list:
        if not isinstance(value, (list, tuple)):
            raise _NotPlain
        (item,) = get_args(descriptor.annotation)
        return [_leaf(item, descriptor, v, param, ctx) for v in value]
    return _leaf(descriptor.annotation, descriptor, value, param, ctx)


@dataclass(frozen=True)
class _PlainRuntimeParam(RuntimeParam):
    """Converts a plain value itself; hands anything else to Typer's adapter."""

    descriptor: TypeDescriptor

    def _coerce_value(self, value: Any, param: _TyperParameter, ctx: _click.Context) -> Any:
        try:
            return _plain(self.descriptor, value, param, ctx)
        except Exception:  # not plain, or refused: Typer converts it, or says why not
            typer_own = build_runtime_param(self.descriptor)
            param._runtime_param = typer_own
            return typer_own._coerce_value(value, param, ctx)


def _convert_plainly(params: list[_click.Parameter]) -> None:
    for param in params:
        if isinstance(param, _TyperParameter) and param._runtime_param is None:
            descriptor = param.type_descriptor
            param._runtime_param = _PlainRuntimeParam(
                parameter_info=descriptor.parameter_info,
                annotation=descriptor.annotation,
                descriptor=descriptor,
            )


class PlainCommand(TyperCommand):
    """A Typer command that converts plain option values without Pydantic."""

    def parse_args(self, ctx: _click.Context, args: list[str]) -> list[str]:
        _convert_plainly(self.get_params(ctx))
        return super().parse_args(ctx, args)


class PlainGroup(TyperGroup):
    """A Typer group that converts plain option values without Pydantic."""

    def parse_args(self, ctx: _click.Context, args: list[str]) -> list[str]:
        _convert_plainly(self.get_params(ctx))
        return super().parse_args(ctx, args)
