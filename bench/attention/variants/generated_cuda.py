"""Helpers the probe edits share for finding their way in tkc's generated CUDA."""


def struct_span(src, name):
    """[start, end) of `struct <name>_kernel { ... };` in `src`."""
    a = src.index(f"struct {name}_kernel {{")
    b = src.index("\n};\n", a) + 4
    return a, b


def body_of(seg, head):
    """The statements of the function whose signature starts with `head` (4-space methods)."""
    a = seg.index(head)
    a = seg.index("{\n", a) + 2
    b = seg.index("\n    }\n", a)
    return seg[a:b + 1]
