"""The package imports and its pure parts work without torch; tkc.load says
clearly that it needs torch."""
import importlib.util
import subprocess
import sys
import unittest
from pathlib import Path
from unittest import mock

import tkc

PYTHON_DIR = Path(__file__).resolve().parents[1]


class WithoutTorch(unittest.TestCase):
    def test_import_does_not_import_torch(self):
        # A fresh interpreter in which `import torch` fails.
        code = ("import sys; sys.modules['torch'] = None; import tkc; "
                "assert 'torch' not in [m for m in sys.modules if sys.modules[m]]; "
                "print(tkc.__version__)")
        r = subprocess.run([sys.executable, "-c", code], cwd=PYTHON_DIR, capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), tkc.__version__)

    def test_load_needs_torch(self):
        real = importlib.util.find_spec

        def no_torch(name, *args):
            return None if name == "torch" else real(name, *args)
        with mock.patch("importlib.util.find_spec", side_effect=no_torch):
            with self.assertRaisesRegex(ImportError, "tkc.load needs PyTorch"):
                tkc.load("kernels-spec/gemm.yaml", epilogue="bias")


if __name__ == "__main__":
    unittest.main()
