"""Compile schema structs into fast decoders, encoders and JSON renderers.

Each (struct, version, flexible) is turned once into plain Python source and
`exec`-ed: straight-line code, one `struct.Struct` per run of fixed-width
fields, no per-field dispatch at run time. That is what keeps a full
OffsetCommit decode well under a microsecond.

Generated functions (all cached, compiled on first use):

* decoder, top level: ``decode(buf) -> obj``; starts after the int16 prefix and
  rejects trailing bytes. Nested: ``decode(buf, pos) -> (obj, pos)``.
* encoder, top level: ``encode(obj) -> bytes`` including the int16 prefix.
  Nested: ``encode(obj, w)`` appends to the bytearray ``w``.
* renderer: ``render(obj) -> dict`` in the shape of Kafka's generated
  JsonConverter (field order of the schema, tagged fields at default omitted).

Decoders raise `DecodeFailure(pos, reason)` and encoders `EncodeFailure`; the
record layer turns them into the public errors with the record's name.
"""
from __future__ import annotations

import base64
import struct
import types
from typing import Any, Callable

from .schema import FIXED_TYPES, Field, Struct
from .uuids import _CACHE as _UUID_CACHE, uuid_from_bytes, uuid_to_kafka_str

EMPTY_TAGS = types.MappingProxyType({})


class DecodeFailure(Exception):
    """Internal: where (absolute byte position) and why decoding stopped."""

    def __init__(self, pos: int, reason: str) -> None:
        super().__init__(pos, reason)
        self.pos = pos
        self.reason = reason


class EncodeFailure(Exception):
    """Internal: why a struct could not be encoded."""


def read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    """Unsigned base-128 varint, at most 5 bytes (Kafka's readUnsignedVarint)."""
    start = pos
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise DecodeFailure(start, "unsigned varint longer than 5 bytes")


def write_uvarint(w: bytearray, n: int) -> None:
    if n < 0:
        raise EncodeFailure(f"negative length/count {n}")
    while n >= 0x80:
        w.append((n & 0x7F) | 0x80)
        n >>= 7
    w.append(n)


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")


_BASE_NS: dict[str, Any] = {
    "_tnew": tuple.__new__,
    "_Fail": DecodeFailure,
    "_EncFail": EncodeFailure,
    "_StructError": struct.error,
    "_uv": read_uvarint,
    "_wuv": write_uvarint,
    "_ucget": _UUID_CACHE.get,
    "_mkuuid": uuid_from_bytes,
    "_kstr": uuid_to_kafka_str,
    "_b64": _b64,
    "_proxy": types.MappingProxyType,
    "_EMPTY": EMPTY_TAGS,
    "_unpack": struct.unpack_from,
    "_pack": struct.pack,
    "_ph": struct.Struct(">h").pack,
    "_pi": struct.Struct(">i").pack,
    "_len": len,
    "_range": range,
    "_list": list,
}

_COMPILED: dict[tuple, Callable] = {}


def _compiled(key: tuple, compile_: Callable) -> Callable:
    """`compile_(*key[1:])`, kept under `key` (what a `get_*` function did not find in `_COMPILED`)."""
    fn = _COMPILED[key] = compile_(*key[1:])
    return fn


class _Src:
    """Source-code builder: indented lines plus a namespace of constants."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ns: dict[str, Any] = dict(_BASE_NS)
        self.indent = 1
        self._n = 0

    def __call__(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def tmp(self, hint: str = "t") -> str:
        self._n += 1
        return f"_{hint}{self._n}"

    def const(self, value: Any, hint: str = "k") -> str:
        for name, v in self.ns.items():
            if v is value and name.startswith("_c"):
                return name
        name = f"_c{hint}{self._n}"
        self._n += 1
        self.ns[name] = value
        return name

    def build(self, header: str, name: str, source_name: str) -> Callable:
        src = header + "\n" + "\n".join(self.lines) + "\n"
        code = compile(src, f"<kgroup.records {source_name}>", "exec")
        exec(code, self.ns)
        fn = self.ns[name]
        fn.__source__ = src  # handy when debugging a codec
        return fn


def _present(s: Struct, version: int) -> list[tuple[int, Field]]:
    return [(i, f) for i, f in enumerate(s.fields) if version in f.version_range]


def _default_expr(src: _Src, f: Field) -> str:
    if f.default_is_fresh_list():
        return "[]"
    return src.const(f.default_value(), "d")


def _not_default_expr(src: _Src, f: Field, v: str) -> str:
    """Python expression: field value `v` differs from the field's default."""
    d = f.default_value()
    if d is None:
        return f"{v} is not None"
    if f.default_is_fresh_list() and not d:
        return f"({v} is None or _len({v}) != 0)"
    return f"{v} != {src.const(d, 'd')}"


def _min_size(f_elem: str, flexible: bool) -> int:
    """Smallest encoding of one primitive (to reject absurd array counts early)."""
    if f_elem in FIXED_TYPES:
        return FIXED_TYPES[f_elem][1]
    if f_elem == "string":
        return 1 if flexible else 2
    return 1 if flexible else 4  # bytes


def _struct_min_size(s: Struct, version: int, flexible: bool) -> int:
    n = 1 if flexible else 0  # the tagged-field count
    for _, f in _present(s, version):
        if flexible and f.is_tagged(version):
            continue
        if f.kind == "prim":
            n += _min_size(f.elem, flexible)
        elif f.kind == "array":
            n += 1 if flexible else 4
        elif f.is_nullable(version):
            n += 1
        else:
            n += _struct_min_size(f.elem, version, flexible)
    return n


# --------------------------------------------------------------------------- decoders


def get_decoder(s: Struct, version: int, flexible: bool, top: bool,
                wrap: type | None = None) -> Callable:
    """`wrap`: a record class; the top-level decoder then is ``decode(buf, key) -> record``
    (saves a call and a tuple on the hot path of `decode_record`)."""
    key = ("dec", s, version, flexible, top, wrap)
    return _COMPILED.get(key) or _compiled(key, _compile_decoder)


def _compile_decoder(s: Struct, version: int, flexible: bool, top: bool,
                     wrap: type | None = None) -> Callable:
    src = _Src()
    src.ns["_C"] = s.cls
    src.ns["_R"] = wrap
    locals_: dict[int, str] = {}
    run: list[tuple[str, str, int, Field | None]] = []  # (fmt, var, width, field)

    def flush() -> None:
        if not run:
            return
        fmt = ">" + "".join(r[0] for r in run)
        width = sum(r[2] for r in run)
        unpack = src.const(struct.Struct(fmt).unpack_from, "s")
        names = ", ".join(r[1] for r in run)
        src(f"{names}{',' if len(run) == 1 else ''} = {unpack}(buf, pos)")
        src(f"pos += {width}")
        for fmtc, var, _, f in run:
            if f is not None and f.kind == "prim" and f.elem == "uuid":
                src(f"{var} = _ucget({var}) or _mkuuid({var})")
        run.clear()

    for i, f in _present(s, version):
        if flexible and f.is_tagged(version):
            continue
        var = locals_[i] = f"v{i}"
        nullable = f.is_nullable(version)
        if f.fixed:
            fmtc, width = FIXED_TYPES[f.elem]
            run.append((fmtc, var, width, f))
        elif f.kind == "struct" and not nullable:
            flush()
            src(f"{var}, pos = {src.const(get_decoder(f.elem, version, flexible, False), 'n')}(buf, pos)")
        elif f.kind == "struct":
            # nullable struct: int8 marker, negative = null
            marker = src.tmp("m")
            run.append(("b", marker, 1, None))
            flush()
            src(f"if {marker} < 0:")
            src(f"    {var} = None")
            src("else:")
            src(f"    {var}, pos = {src.const(get_decoder(f.elem, version, flexible, False), 'n')}(buf, pos)")
        else:
            length = src.tmp("n")
            if flexible:
                flush()
                _emit_read_uvarint(src, length)
                src(f"{length} -= 1")
            else:
                # int16 length for strings, int32 for bytes and arrays; read with the run
                is_string = f.kind == "prim" and f.elem == "string"
                run.append(("h", length, 2, None) if is_string else ("i", length, 4, None))
                flush()
            _emit_read_variable(src, f, var, length, nullable, version, flexible)
    flush()

    unk = "_EMPTY"
    if flexible:
        unk = "unk"
        tagged = [(i, f) for i, f in _present(s, version) if f.is_tagged(version)]
        for i, _ in tagged:
            locals_[i] = f"v{i}"
        _emit_read_tag_section(src, tagged, version)

    values = []
    for i, f in enumerate(s.fields):
        values.append(locals_.get(i) or _default_expr(src, f))
    values.append(unk)  # the fast path below relies on this order
    tuple_expr = f"_tnew(_C, ({', '.join(values)},))"

    body = src.lines
    src.lines = []
    src.indent = 1
    if wrap is not None:
        _emit_all_empty_fast_path(src, s, version, flexible, values)
    if top:
        src("pos = 2")
    src("nbuf = _len(buf)")
    src("try:")
    src.lines.extend("    " + line for line in body)
    src("except (_StructError, IndexError):")
    src("    raise _Fail(pos, f'unexpected end of data ({nbuf} bytes in all)') from None")
    src("except UnicodeDecodeError:")
    src("    raise _Fail(pos, 'invalid UTF-8 in a string') from None")
    if top:
        src("if pos != nbuf:")
        src("    raise _Fail(pos, f'{nbuf - pos} unexpected trailing bytes')")
        if wrap is not None:
            src(f"return _tnew(_R, (key, {tuple_expr}, {version}))")
            header = "def decode(buf, key):"
        else:
            src(f"return {tuple_expr}")
            header = "def decode(buf):"
    else:
        src(f"return {tuple_expr}, pos")
        header = "def decode(buf, pos):"
    return src.build(header, "decode", f"decode {s.name} v{version}")


def _emit_all_empty_fast_path(src: _Src, s: Struct, version: int, flexible: bool,
                              values: list[str]) -> None:
    """One `unpack` for the common shape where every string/bytes field is empty and no
    tagged field is set (e.g. OffsetCommit with metadata ""): the size is then fixed."""
    fmt, names, checks = ">xx", [], []
    for i, f in _present(s, version):
        if flexible and f.is_tagged(version):
            continue
        if f.fixed:
            fmt += FIXED_TYPES[f.elem][0]
            names.append(f"v{i}")
            if f.elem == "uuid":
                return  # keep it simple: needs a conversion
        elif f.kind == "prim":  # string/bytes: length must say "empty"
            fmt += "B" if flexible else ("h" if f.elem == "string" else "i")
            names.append(f"_z{i}")
            checks.append(f"_z{i} == {1 if flexible else 0}")
        else:
            return  # arrays and structs: no fixed size
    if flexible:
        fmt += "B"  # tagged-field count
        names.append("_ztags")
        checks.append("_ztags == 0")
    if not checks:
        return  # all fixed already: the general path is one unpack anyway
    fast_values = []
    for i, f in enumerate(s.fields):
        if version not in f.version_range:
            fast_values.append(values[i])                 # absent: already the default
        elif flexible and f.is_tagged(version):
            fast_values.append(_default_expr(src, f))     # no tags were present
        elif f.kind == "prim" and not f.fixed:
            fast_values.append(repr("" if f.elem == "string" else b""))
        else:
            fast_values.append(values[i])                 # read by the unpack
    fast_values.append("_EMPTY")
    unpack = src.const(struct.Struct(fmt).unpack_from, "s")
    src(f"if _len(buf) == {struct.calcsize(fmt)}:")
    src(f"    {', '.join(names)}{',' if len(names) == 1 else ''} = {unpack}(buf)")
    src(f"    if {' and '.join(checks)}:")
    src(f"        return _tnew(_R, (key, _tnew(_C, ({', '.join(fast_values)},)), {version}))")


def _emit_read_tag_section(src: _Src, tagged: list[tuple[int, Field]], version: int) -> None:
    """The tagged fields at the end of a flexible struct: known tags into v<i>, others into `unk`."""
    for i, f in tagged:
        src(f"v{i} = {_default_expr(src, f)}")
    src("unk = _EMPTY")
    src("if buf[pos] == 0:")  # the usual case: no tagged fields at all
    src("    pos += 1")
    src("else:")
    src.indent += 1
    src("ntags, pos = _uv(buf, pos)")
    src("for _ in _range(ntags):")
    src.indent += 1
    src("tstart = pos")
    src("tag, pos = _uv(buf, pos)")
    src("size, pos = _uv(buf, pos)")
    src("tend = pos + size")
    src("if tend > nbuf:")
    src("    raise _Fail(tstart, f'tagged field {tag} needs {size} bytes, only {nbuf - pos} left')")
    keyword = "if"
    for i, f in tagged:
        src(f"{keyword} tag == {f.tag}:")
        keyword = "elif"
        src.indent += 1
        _emit_read_tagged(src, f, f"v{i}", version)
        src("if pos != tend:")
        src(f"    raise _Fail(tstart, f'tagged field {f.name} (tag {f.tag}) declares {{size}} bytes "
            f"but holds {{pos - tend + size}}')")
        src.indent -= 1
    if tagged:
        src("else:")
        src.indent += 1
    src("if unk is _EMPTY:")
    src("    unk = {}")
    src("unk[tag] = buf[pos:tend]")  # unknown tag: keep the raw bytes for re-encoding
    src("pos = tend")
    if tagged:
        src.indent -= 1
    src.indent -= 1
    src("if unk is not _EMPTY:")
    src("    unk = _proxy(unk)")
    src.indent -= 1


def _emit_read_uvarint(src: _Src, var: str) -> None:
    src(f"{var} = buf[pos]")
    src(f"if {var} < 0x80:")
    src("    pos += 1")
    src("else:")
    src(f"    {var}, pos = _uv(buf, pos)")


def _emit_null_check(src: _Src, f: Field, var: str, length: str, nullable: bool) -> None:
    src(f"if {length} < 0:")
    if nullable:
        src(f"    {var} = None")
    else:
        src(f"    raise _Fail(pos, 'non-nullable field {f.name} was serialized as null')")
    src("else:")


def _emit_read_variable(src: _Src, f: Field, var: str, length: str, nullable: bool,
                        version: int, flexible: bool) -> None:
    """String, bytes or array whose length/count is already in `length` (-1 = null)."""
    _emit_null_check(src, f, var, length, nullable)
    src.indent += 1
    if f.kind == "prim":
        _emit_read_blob(src, f.name, f.elem, var, length, flexible)
    else:
        _emit_read_array(src, f, var, length, version, flexible)
    src.indent -= 1


def _emit_read_blob(src: _Src, name: str, kind: str, var: str, length: str, flexible: bool) -> None:
    if kind == "string" and flexible:
        src(f"if {length} > 0x7fff:")
        src(f"    raise _Fail(pos, f'string field {name} had invalid length {{{length}}}')")
    src(f"end = pos + {length}")
    src("if end > nbuf:")
    src(f"    raise _Fail(pos, f'{kind} field {name} needs {{{length}}} bytes, only {{nbuf - pos}} left')")
    if kind == "string":
        src(f"{var} = buf[pos:end].decode()")
    else:
        src(f"{var} = buf[pos:end]")
    src("pos = end")


def _emit_read_array(src: _Src, f: Field, var: str, count: str, version: int, flexible: bool) -> None:
    elem = f.elem
    if isinstance(elem, Struct):
        min_size = _struct_min_size(elem, version, flexible)
    else:
        min_size = _min_size(elem, flexible)
    if min_size:
        src(f"if {count} * {min_size} > nbuf - pos:")
        src(f"    raise _Fail(pos, f'array field {f.name} claims {{{count}}} elements, only {{nbuf - pos}} bytes left')")
    if isinstance(elem, Struct):
        dec = src.const(get_decoder(elem, version, flexible, False), "n")
        el = src.tmp("e")
        src(f"{var} = []")
        src(f"for _ in _range({count}):")
        src(f"    {el}, pos = {dec}(buf, pos)")
        src(f"    {var}.append({el})")
    elif elem == "uuid":
        src(f"{var} = [_ucget(buf[p:p + 16]) or _mkuuid(buf[p:p + 16]) for p in _range(pos, pos + 16 * {count}, 16)]")
        src(f"pos += 16 * {count}")
    elif elem in FIXED_TYPES:
        fmtc, width = FIXED_TYPES[elem]
        src(f"{var} = _list(_unpack(f'>{{{count}}}{fmtc}', buf, pos)) if {count} else []")
        src(f"pos += {width} * {count}")
    else:
        item, n = src.tmp("i"), src.tmp("n")
        src(f"{var} = []")
        src(f"for _ in _range({count}):")
        src.indent += 1
        if flexible:
            _emit_read_uvarint(src, n)
            src(f"{n} -= 1")
        else:
            fmt = ">h" if elem == "string" else ">i"
            width = 2 if elem == "string" else 4
            src(f"{n}, = {src.const(struct.Struct(fmt).unpack_from, 's')}(buf, pos)")
            src(f"pos += {width}")
        src(f"if {n} < 0:")
        src(f"    raise _Fail(pos, 'non-nullable field {f.name} element was serialized as null')")
        _emit_read_blob(src, f.name + " element", elem, item, n, flexible)
        src(f"{var}.append({item})")
        src.indent -= 1


def _emit_read_tagged(src: _Src, f: Field, var: str, version: int) -> None:
    """A known tagged field: its normal flexible encoding (structs: varint null marker)."""
    nullable = f.is_nullable(version)
    if f.fixed:
        fmtc, width = FIXED_TYPES[f.elem]
        src(f"{var}, = {src.const(struct.Struct('>' + fmtc).unpack_from, 's')}(buf, pos)")
        src(f"pos += {width}")
        if f.elem == "uuid":
            src(f"{var} = _ucget({var}) or _mkuuid({var})")
    elif f.kind == "struct":
        dec = src.const(get_decoder(f.elem, version, True, False), "n")
        if nullable:
            m = src.tmp("m")
            src(f"{m}, pos = _uv(buf, pos)")
            src(f"if {m} <= 0:")
            src(f"    {var} = None")
            src("else:")
            src(f"    {var}, pos = {dec}(buf, pos)")
        else:
            src(f"{var}, pos = {dec}(buf, pos)")
    else:
        n = src.tmp("n")
        src(f"{n}, pos = _uv(buf, pos)")
        src(f"{n} -= 1")
        _emit_read_variable(src, f, var, n, nullable, version, True)


# --------------------------------------------------------------------------- encoders


def get_encoder(s: Struct, version: int, flexible: bool, top: bool,
                prefix: int | None = None) -> Callable:
    """`prefix`: the int16 a top-level encoder writes first (default: `version`)."""
    key = ("enc", s, version, flexible, top, prefix)
    return _COMPILED.get(key) or _compiled(key, _compile_encoder)


def _compile_encoder(s: Struct, version: int, flexible: bool, top: bool,
                     prefix: int | None) -> Callable:
    src = _Src()
    src.ns["_C"] = s.cls
    names = [f"v{i}" for i in range(len(s.fields))] + ["unk"]
    src(f"({', '.join(names)},) = o")
    run: list[tuple[str, str, str]] = []  # (fmt, value expression, field name)

    def flush() -> None:
        if not run:
            return
        pack = src.const(struct.Struct(">" + "".join(r[0] for r in run)).pack, "p")
        src(f"fld = {'/'.join(r[2] for r in run)!r}")
        src(f"w += {pack}({', '.join(r[1] for r in run)})")
        run.clear()

    for i, f in _present(s, version):
        if flexible and f.is_tagged(version):
            continue
        v = f"v{i}"
        if f.fixed:
            fmtc, _ = FIXED_TYPES[f.elem]
            run.append((fmtc, f"{v}.bytes" if f.elem == "uuid" else v, f.name))
            continue
        flush()
        src(f"fld = {f.name!r}")
        _emit_write(src, f, v, version, flexible, tagged=False, owner=s.name)
    flush()

    if not flexible:
        # like Kafka: tagged fields cannot be written in a non-flexible version
        src("if unk:")
        src(f"    raise _EncFail('{s.name} has unknown tagged fields, which version {version} cannot hold')")
    else:
        tagged = [(i, f) for i, f in _present(s, version) if f.is_tagged(version)]
        tagged.sort(key=lambda t: t[1].tag)
        conds = [_not_default_expr(src, f, f"v{i}") for i, f in tagged]
        quick = " and ".join(["not unk"] + [f"not ({c})" for c in conds])
        src(f"if {quick}:")
        src("    w.append(0)")
        src("else:")
        src.indent += 1
        src("tags = []")
        for (i, f), cond in zip(tagged, conds):
            src(f"if {cond}:")
            src.indent += 1
            src(f"fld = {f.name!r}")
            # write the payload into its own buffer first: its size precedes it
            src("tw = bytearray()")
            src("_outer_w = w")
            src("w = tw")
            _emit_write(src, f, f"v{i}", version, True, tagged=True, owner=s.name)
            src("w = _outer_w")
            src(f"tags.append(({f.tag}, tw))")
            src.indent -= 1
        src("if unk:")
        src("    tags.extend(unk.items())")
        src("    tags.sort(key=lambda t: t[0])")
        src("_wuv(w, _len(tags))")
        src("for tag, payload in tags:")
        src("    _wuv(w, tag)")
        src("    _wuv(w, _len(payload))")
        src("    w += payload")
        src.indent -= 1

    body = src.lines
    src.lines = []
    src.indent = 1
    if top:
        src(f"w = bytearray({struct.pack('>h', version if prefix is None else prefix)!r})")
    src("fld = None")
    src("try:")
    src.lines.extend("    " + line for line in body)
    src("except (_StructError, TypeError, AttributeError, OverflowError, ValueError) as exc:")
    src(f"    raise _EncFail(f'{s.name}.{{fld}}: {{exc}}' if fld else f'{s.name}: {{exc}}') from None")
    if top:
        src("return bytes(w)")
        header = "def encode(o):"
    else:
        header = "def encode(o, w):"
    return src.build(header, "encode", f"encode {s.name} v{version}")


def _emit_write(src: _Src, f: Field, v: str, version: int, flexible: bool, tagged: bool,
                owner: str) -> None:
    nullable = f.is_nullable(version)
    name = f"{owner}.{f.name}"
    if f.fixed:
        fmtc, _ = FIXED_TYPES[f.elem]
        pack = src.const(struct.Struct(">" + fmtc).pack, "p")
        src(f"w += {pack}({v}.bytes)" if f.elem == "uuid" else f"w += {pack}({v})")
        return
    if f.kind == "struct":
        enc = src.const(get_encoder(f.elem, version, flexible, False), "n")
        cls = src.const(f.elem.cls, "c")
        src(f"if {v} is None:")
        if not nullable:
            src(f"    raise _EncFail('{name} is not nullable')")
        elif tagged:
            src("    w.append(0)")
        else:
            src("    w.append(0xFF)")
        src(f"elif {v}.__class__ is not {cls}:")
        src(f"    raise _EncFail(f'{name} must be a {f.elem.name}, not {{type({v}).__name__}}')")
        src("else:")
        if nullable:
            src("    w.append(1)")
        src(f"    {enc}({v}, w)")
        return
    # string, bytes or array: length/count prefix, -1 (or compact 0) for null
    src(f"if {v} is None:")
    if not nullable:
        src(f"    raise _EncFail('{name} is not nullable')")
    elif flexible:
        src("    w.append(0)")
    elif f.kind == "prim" and f.elem == "string":
        src("    w += b'\\xff\\xff'")
    else:
        src("    w += b'\\xff\\xff\\xff\\xff'")
    src("else:")
    src.indent += 1
    if f.kind == "prim":
        _emit_write_blob(src, name, f.elem, v, flexible)
    else:
        _emit_write_array(src, f, v, version, flexible, name)
    src.indent -= 1


def _emit_write_blob(src: _Src, name: str, kind: str, v: str, flexible: bool) -> None:
    if kind == "string":
        e = src.tmp("b")
        src(f"{e} = {v}.encode()")
        src(f"if _len({e}) > 0x7fff:")
        src(f"    raise _EncFail(f'string {name} is {{_len({e})}} bytes long (limit 32767)')")
    else:
        e = v
    if flexible:
        src(f"_wuv(w, _len({e}) + 1)")
    elif kind == "string":
        src(f"w += _ph(_len({e}))")
    else:
        src(f"w += _pi(_len({e}))")
    src(f"w += {e}")


def _emit_write_array(src: _Src, f: Field, v: str, version: int, flexible: bool, name: str) -> None:
    if flexible:
        src(f"_wuv(w, _len({v}) + 1)")
    else:
        src(f"w += _pi(_len({v}))")
    elem = f.elem
    el = src.tmp("e")
    if isinstance(elem, Struct):
        enc = src.const(get_encoder(elem, version, flexible, False), "n")
        cls = src.const(elem.cls, "c")
        src(f"for {el} in {v}:")
        src(f"    if {el}.__class__ is not {cls}:")
        src(f"        raise _EncFail(f'{name} elements must be {elem.name}, not {{type({el}).__name__}}')")
        src(f"    {enc}({el}, w)")
    elif elem == "uuid":
        src(f"for {el} in {v}:")
        src(f"    w += {el}.bytes")
    elif elem in FIXED_TYPES:
        fmtc, _ = FIXED_TYPES[elem]
        src(f"w += _pack(f'>{{_len({v})}}{fmtc}', *{v})")
    else:
        src(f"for {el} in {v}:")
        src.indent += 1
        src(f"if {el} is None:")
        src(f"    raise _EncFail('{name} elements are not nullable')")
        _emit_write_blob(src, name + " element", elem, el, flexible)
        src.indent -= 1


# --------------------------------------------------------------------------- JSON renderers


def get_renderer(s: Struct, version: int, flexible: bool) -> Callable:
    key = ("json", s, version, flexible)
    return _COMPILED.get(key) or _compiled(key, _compile_renderer)


def _compile_renderer(s: Struct, version: int, flexible: bool) -> Callable:
    src = _Src()
    names = [f"v{i}" for i in range(len(s.fields))] + ["unk"]
    src(f"({', '.join(names)},) = o")
    src("d = {}")
    for i, f in _present(s, version):
        v = f"v{i}"
        expr = _json_expr(src, f, v, version, flexible)
        if flexible and f.is_tagged(version):
            src(f"if {_not_default_expr(src, f, v)}:")
            src(f"    d[{f.json_key!r}] = {expr}")
        else:
            src(f"d[{f.json_key!r}] = {expr}")
    src("return d")
    return src.build("def render(o):", "render", f"render {s.name} v{version}")


def _json_expr(src: _Src, f: Field, v: str, version: int, flexible: bool) -> str:
    if f.kind == "array":
        inner = _json_elem_expr(src, f.elem, "e", version, flexible)
        expr = f"_list({v})" if inner == "e" else f"[{inner} for e in {v}]"
    else:
        expr = _json_elem_expr(src, f.elem, v, version, flexible)
        if expr == v:
            return v
    if f.is_nullable(version) or f.kind == "struct":
        return f"(None if {v} is None else {expr})"
    return expr


def _json_elem_expr(src: _Src, elem: Any, v: str, version: int, flexible: bool) -> str:
    if isinstance(elem, Struct):
        return f"{src.const(get_renderer(elem, version, flexible), 'r')}({v})"
    if elem == "uuid":
        return f"_kstr({v})"
    if elem == "bytes":
        return f"_b64({v})"
    return v
