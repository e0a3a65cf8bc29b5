"""Shared by the probe edits of a generated gemm.cu (bench/gemm/variants/{warp_store,stagger,
fast_order,deferred_store,wg_tail,lsu_last_store}.py): read the file, replace exact snippets
inside one kernel's struct (each must occur there exactly once) or anywhere in the file, write
it back."""
import sys
from pathlib import Path


class KernelPatch:
    def __init__(self, path, kernel="gemm_none"):
        self.path = Path(path)
        src = self.path.read_text()
        start = src.index("struct %s_kernel {" % kernel)
        end = src.index("\n};\n", start) + len("\n};\n")
        self.head, self.kernel, self.tail = src[:start], src[start:end], src[end:]

    @staticmethod
    def _replace(text, old, new, where):
        count = text.count(old)
        if count != 1:
            sys.exit(f"{Path(sys.argv[0]).name}: expected one '{old.strip()[:60]}' in {where}, found {count}")
        return text.replace(old, new)

    def edit(self, old, new):
        """Replace a snippet of the kernel's struct."""
        self.kernel = self._replace(self.kernel, old, new, "the kernel")

    def replace_between(self, first, last, new):
        """Replace the kernel's text from snippet `first` up to (not including) snippet `last`."""
        a = self.kernel.index(first)
        b = self.kernel.index(last, a)
        self.kernel = self.kernel[:a] + new + self.kernel[b:]

    def edit_file(self, old, new):
        """Replace a snippet outside the kernel's struct (e.g. in its launcher)."""
        rest = self._replace(self.head + "\0" + self.tail, old, new, self.path)
        self.head, self.tail = rest.split("\0")

    def write(self):
        self.path.write_text(self.head + self.kernel + self.tail)
