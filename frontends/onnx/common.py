"""Helpers the ONNX importer's modules share: one-line message text, SSA name hints and
weights-file keys derived from ONNX names, a node's description and its attributes."""

from __future__ import annotations

import re

import onnx

_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_$.-]")
_INVALID_KEY_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def printable(text: str) -> str:
    """`text` with control characters (a newline in an ONNX name) escaped, so that a message
    naming them stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def sanitize_name(name: str) -> str:
    """A valid SSA name hint derived from an ONNX value name (ASCII letters, digits, `_$.-`)."""
    clean = _INVALID_NAME_CHARS.sub("_", name)
    if not clean or clean[0].isdigit():
        clean = "v" + clean
    return clean


def safe_key(name: str, used: set[str]) -> str:
    """A file-name-safe, unique key for the weights archive."""
    base = _INVALID_KEY_CHARS.sub("_", name)[:64].strip(".") or "w"
    key, index = base, 1
    while key in used:
        index += 1
        key = f"{base}~{index}"
    used.add(key)
    return key


def describe(node: onnx.NodeProto, index: int) -> str:
    if node.name:
        return f"node '{node.name}' ({node.op_type})"
    produced = next((o for o in node.output if o), "")
    return f"node #{index} ({node.op_type}) producing '{produced}'"


def attributes(node: onnx.NodeProto) -> dict:
    """A node's attributes by name, as Python values."""
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def text_attribute(attrs: dict, name: str, default: str) -> str:
    """A string attribute as text (`default` when absent); bytes that are not UTF-8 become
    replacement characters, which the converter's check then names, rather than an error."""
    value = attrs.get(name, default)
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def auto_pad_name(attrs: dict) -> str:
    """A node's auto_pad attribute as text (NOTSET when absent)."""
    return text_attribute(attrs, "auto_pad", "NOTSET")
