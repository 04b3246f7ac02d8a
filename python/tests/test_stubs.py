"""The type stubs list exactly what each class has at run time."""

import ast
import pathlib

import concurrent_cuckoo
from concurrent_cuckoo import _native

STUB = pathlib.Path(concurrent_cuckoo.__file__).with_name("_native.pyi")


def stub_classes():
    tree = ast.parse(STUB.read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def names(cls):
        own = {
            n.name
            for n in cls.body
            if isinstance(n, ast.FunctionDef) and (not n.name.startswith("_") or n.name in DUNDERS)
        }
        for base in cls.bases:
            own |= names(classes[base.id])
        return own

    return {name: names(c) for name, c in classes.items() if not name.startswith("_")}


DUNDERS = {"__contains__", "__len__", "__reduce__", "__new__"}


def test_the_stub_is_installed_with_py_typed():
    assert STUB.is_file()
    assert STUB.with_name("py.typed").is_file()


def test_every_stubbed_method_exists_and_every_public_one_is_stubbed():
    stubs = stub_classes()
    assert sorted(stubs) == [
        "CuckooFilter",
        "FrozenFilter",
        "ScalableCuckooFilter",
        "TimedCuckooFilter",
        "WindowedCuckooFilter",
    ]
    for name, methods in stubs.items():
        cls = getattr(_native, name)
        public = {m for m in dir(cls) if not m.startswith("_")}
        assert public == methods - DUNDERS, name
        for m in methods & DUNDERS:
            assert hasattr(cls, m), (name, m)


def test_the_classes_are_final_at_run_time_as_in_the_stub():
    import pytest

    for name in [
        "CuckooFilter",
        "FrozenFilter",
        "ScalableCuckooFilter",
        "TimedCuckooFilter",
        "WindowedCuckooFilter",
    ]:
        with pytest.raises(TypeError):
            type("Sub", (getattr(_native, name),), {})
    tree = ast.parse(STUB.read_text())
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            assert any(getattr(d, "id", None) == "final" for d in node.decorator_list), node.name
