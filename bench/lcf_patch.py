"""Shared by the scripts that patch a copy of kittens' LCF template for diagnostics and
probes (bench/attention/timeline/patch_lcf.py, bench/gemm/timeline/patch_{start,arrival}.py, and
the kittens edits among bench/gemm/variants/, e.g. early_loads.py or no_zero.py): copy kittens,
then replace exact snippets of kittens/lcf/lcf_sm90.cuh (or another header), each of which must
occur exactly once."""
import shutil
import sys
from pathlib import Path


class LcfPatch:
    def __init__(self, include, copy_from=None, header="kittens/lcf/lcf_sm90.cuh"):
        """Patch include/<header> (the LCF template unless named); with copy_from, first copy
        that kittens include folder to include (replacing what was there)."""
        include = Path(include)
        if copy_from is not None:
            if include.exists():
                shutil.rmtree(include)
            shutil.copytree(Path(copy_from), include)
        self.path = include / header
        self.text = self.path.read_text()

    def edit(self, old, new):
        count = self.text.count(old)
        if count != 1:
            sys.exit(f"{Path(sys.argv[0]).name}: expected one '{old.strip()[:60]}' in {self.path}, found {count}")
        self.text = self.text.replace(old, new)

    def edit_each(self, old, new):
        """Replace every occurrence of `old` (at least one)."""
        if old not in self.text:
            sys.exit(f"{Path(sys.argv[0]).name}: expected '{old.strip()[:60]}' in {self.path}")
        self.text = self.text.replace(old, new)

    def write(self):
        self.path.write_text(self.text)
