"""Every name a Python file of this tree reads is defined: in its scope, an enclosing one, the
module, or the builtins. The GPU checks, the benchmarks and tkc.functional need torch or a GPU
to import, so CI cannot run them; a name left behind by a move (a helper renamed into another
module) would fail only on the GPU machine. This reads each file's symbol table instead."""
import builtins
import symtable
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("python/tkc", "python/gpu_tests", "python/tests", "bench", "test/fuzz")
ALWAYS = set(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__"}


def undefined_names(source: str, filename: str):
    """(scope, line, name) for each name read but defined nowhere it could come from."""
    top = symtable.symtable(source, filename, "exec")
    module = {s.get_name() for s in top.get_symbols()
              if s.is_assigned() or s.is_imported() or s.is_namespace()} | ALWAYS
    found = [("<module>", 1, s.get_name()) for s in top.get_symbols()
             if s.is_referenced() and s.get_name() not in module]

    def walk(table):
        for child in table.get_children():
            found.extend((child.get_name(), child.get_lineno(), s.get_name())
                         for s in child.get_symbols()
                         if s.is_referenced() and s.is_global() and s.get_name() not in module)
            walk(child)
    walk(top)
    return found


class Names(unittest.TestCase):
    def test_every_name_read_is_defined(self):
        files = sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))
        self.assertGreater(len(files), 20)
        problems = []
        for path in files:
            for scope, line, name in undefined_names(path.read_text(), str(path)):
                problems.append("%s:%d: '%s' read in %s is defined nowhere"
                                % (path.relative_to(ROOT), line, name, scope))
        self.assertEqual(problems, [], "\n".join(problems))

    def test_finds_a_name_left_behind(self):
        source = ("def spec_dir():\n    return 1\n\n"
                  "class Kernels:\n    def get(self):\n        return spec_dirs() + len([])\n")
        self.assertEqual(undefined_names(source, "moved.py"), [("get", 5, "spec_dirs")])
        self.assertEqual(undefined_names("x = [y for y in range(3)]\nprint(x)\n", "ok.py"), [])


if __name__ == "__main__":
    unittest.main()
