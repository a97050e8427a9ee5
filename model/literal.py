"""Configuration strings are data: how the configuration's values reach the Terraform JSON the stacks write without
ever becoming Terraform expressions.

Wherever an expression may stand, Terraform reads a string of a `.tf.json` file as a string template (Terraform
docs, "JSON Configuration Syntax"): `${...}` is an interpolation and `%{...}` a directive, both evaluated at plan. Taken
as they are, a tag `${file("/etc/hostname")}` would put a file of the machine that plans into a plan (which CI posts
on a pull request), an IAM policy variable `${aws:username}` in an application's policy fails `terraform validate`,
and a Helm value `${POD_NAME}` fails the plan. So every stack writes the configuration through `literals` (stacks/base.py
`configure_stack`), and common the policy documents of its shared roles through `literal` (policies.render_from):
`${` as `$${` and `%{` as `%%{`, the template syntax's own escapes, which Terraform reads back as `${` and `%{`.

What is not escaped, because it is code: the stacks' own expressions (cdktf's references, `${each.value}` and the
conditions the components write) and the project's own documents (policies/*.json, filled with references and with
values of the escaped configuration).

Where Terraform evaluates nothing and reads a string literally (a backend's settings, an output's description), the
configuration's own text goes: escaped, it would arrive there with the escape in it.

cdktf's `Fn.raw_string` (0.21) is not this: it escapes for a string literal inside an expression (its quotes and line
breaks backslashed too, `%{` left), which corrupts a document written as a whole attribute.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypeVar

from pydantic import BaseModel

_TEMPLATE_SEQUENCE = re.compile(r"\$\{|%\{")
# cdktf (0.21, lib/tokens/private/encoding.js) reads a `${` in a string that holds one of its references as the start of
# an expression that runs to the next `}`, and writes the references inside it without their `${ }`: a `$${` with no `}`
# after it would turn every reference after it in the same string (a chart's values, a filled policy) into plain text.
# And `${TfToken[` is cdktf's own reference marker, found even after the escape's `$`. Such a `${` is written as `$`, an
# empty directive and `{`, which Terraform reads as `${` too, and in which cdktf finds no `${`.
UNSEEN_BY_CDKTF = "$%{ if true }%{ endif }{"
_CDKTF_REFERENCE = "TfToken["

T = TypeVar("T")


def literal(text: str) -> str:
    """text as a Terraform string template that means text itself: no interpolation, no directive."""
    if "${" not in text and "%{" not in text:
        return text

    def escaped(found: re.Match[str]) -> str:
        if found.group() == "%{":
            return "%%{"
        rest = text[found.end() :]
        return UNSEEN_BY_CDKTF if rest.startswith(_CDKTF_REFERENCE) or "}" not in rest else "$${"

    return _TEMPLATE_SEQUENCE.sub(escaped, text)


def literals(value: T) -> T:
    """value with every string in it passed through `literal`, mapping keys included: a configuration (pydantic models,
    frozen, copied), or a mapping, list, tuple or string of one. Anything else comes back as it is."""
    escaped: Any
    if isinstance(value, str):
        escaped = literal(value)
    elif isinstance(value, BaseModel):
        escaped = value.model_copy(update={name: literals(getattr(value, name)) for name in type(value).model_fields})
    elif isinstance(value, Mapping):
        items = {literals(key): literals(item) for key, item in value.items()}
        escaped = MappingProxyType(items) if isinstance(value, MappingProxyType) else items
    elif isinstance(value, tuple | list):
        escaped = type(value)(literals(item) for item in value)
    else:
        escaped = value
    result: T = escaped
    return result
