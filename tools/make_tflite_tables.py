"""Write ``openvx_nn/nnapi/tflite/schema_tables.py``: the facts of TFLite's flatbuffer schema that our reader needs
(each table's fields: name, vtable slot, type, default; the builtin operators; the tensor types; the members of
the options union), taken from the schema module LiteRT ships, so that reading a ``.tflite`` file does not
import that module (4.8 MiB of Python code in memory).

    python tools/make_tflite_tables.py            # rewrite the file
    python tools/make_tflite_tables.py --check    # exit 1 if the file differs from what the schema gives
"""
from __future__ import annotations

import ast
import inspect
import re
import sys
from pathlib import Path

TARGET = Path(__file__).resolve().parent.parent / "openvx_nn" / "nnapi" / "tflite" / "schema_tables.py"
CORE = ("Model", "SubGraph", "Tensor", "QuantizationParameters", "Operator", "OperatorCode", "Buffer")
"""The tables the reader walks; the options union's members are added to them."""
_FLAGS = {"Bool": "?", "Int8": "b", "Uint8": "B", "Int16": "h", "Uint16": "H", "Int32": "i", "Uint32": "I",
          "Int64": "q", "Uint64": "Q", "Float32": "f", "Float64": "d"}
_METHOD = re.compile(r"    # (\w+)\n    def (\w+)\(self(, j)?\):\n((?:        .*\n)+)")


def _kind(body: str, vector: bool) -> str | None:
    """The field's type code from the accessor's body: a struct format for a scalar, "s" a string,
    "t:Name" a table, "u" a union's value; "[" before it for a vector. None: not a field accessor."""
    flags = re.search(r"number_types\.(\w+)Flags, (?:a|o) \+", body)
    table = re.search(r"obj = (\w+)\(\)", body)
    if "self._tab.Union(" in body:
        return "u"
    if "self._tab.String(" in body:
        return "[s" if vector else "s"
    if table:
        return ("[t:" if vector else "t:") + table.group(1)
    if flags:
        return ("[" if vector else "") + _FLAGS[flags.group(1)]
    return None


def _classes(schema) -> dict[str, str]:
    """Each class's source in the schema module (``inspect.getsource`` parses the whole module per class)."""
    text = inspect.getsource(schema)
    starts = [(m.start(), m.group(1)) for m in re.finditer(r"^class (\w+)\(", text, re.MULTILINE)]
    ends = [start for start, _ in starts[1:]] + [len(text)]
    return {name: text[start:end] for (start, name), end in zip(starts, ends)}


def _fields(classes: dict[str, str], name: str) -> list[tuple[str, int, str, object]]:
    source = classes[name]
    fields = []
    for match in _METHOD.finditer(source):
        owner, method, vector, body = match.groups()
        if owner != name or method in ("Init",) or method.endswith(("AsNumpy", "Length", "IsNone")):
            continue
        slot = re.search(r"self\._tab\.Offset\((\d+)\)", body)
        kind = _kind(body, bool(vector))
        if slot is None or kind is None:
            continue
        default = None
        if not vector and kind in _FLAGS.values():
            literal = re.findall(r"\n        return (.+)\n", body)[-1]
            default = ast.literal_eval(literal)
        fields.append((method[0].lower() + method[1:], (int(slot.group(1)) - 4) // 2, kind, default))
    return fields


def tables(schema) -> str:
    union = {value: key for key, value in vars(schema.BuiltinOptions).items() if not key.startswith("_")}
    union.pop(0, None)  # NONE
    operators = {value: key for key, value in vars(schema.BuiltinOperator).items() if not key.startswith("_")}
    types = {value: key for key, value in vars(schema.TensorType).items() if not key.startswith("_")}
    classes = _classes(schema)
    lines = ['"""TFLite\'s flatbuffer schema as our reader needs it. Written by ``tools/make_tflite_tables.py`` from',
             'the schema module LiteRT ships; do not edit by hand."""', "",
             "TABLES = {",
             '    # table: ((field, vtable slot, type, default), ...); type: a struct format for a scalar, "s" a string,',
             '    # "t:Name" a table, "u" the options union\'s value; a leading "[" makes it a vector']
    for name in CORE + tuple(union[k] for k in sorted(union)):
        lines.append(f"    {name!r}: (")
        row = "       "
        for field in _fields(classes, name):
            item = f" {field!r},"
            if len(row) + len(item) > 116:
                lines.append(row)
                row = "       "
            row += item
        lines += [row, "    ),"] if row.strip() else ["    ),"]
    lines += ["}", "", "BUILTIN_OPTIONS = {"]
    lines += [f"    {code}: {union[code]!r}," for code in sorted(union)]
    lines += ["}", '"""The options union\'s members by their type code."""', "", "BUILTIN_OPERATORS = {"]
    lines += [f"    {code}: {operators[code]!r}," for code in sorted(operators)]
    lines += ["}", "", "TENSOR_TYPES = {"]
    lines += [f"    {code}: {types[code]!r}," for code in sorted(types)]
    lines += ["}", ""]
    return "\n".join(lines)


def main() -> int:
    from ai_edge_litert import schema_py_generated
    from generated_file import write_or_check  # beside this script
    return write_or_check(TARGET, tables(schema_py_generated), "--check" in sys.argv[1:],
                          "python tools/make_tflite_tables.py")


if __name__ == "__main__":
    sys.exit(main())
