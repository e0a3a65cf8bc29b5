"""Probe edit (not shipped; bench/NOTES.md session 11): the next task's q tile loaded at
the end of a warpgroup's first compute iteration instead of in setup. In setup, the
load must first wait until the previous task's TMA store has read the copy it overwrites
(store_async_read_wait), a store issued moments before, at the end of finish; one lane
waits and its warpgroup with it, once per task. One iteration later the store is long
done. A warpgroup that computes nothing in a task issues the load in finish instead.
Applied by bench/attention/variants/tkc-lateq to every kernel that loads q ahead."""
import re, sys
path = sys.argv[1]
src = open(path).read()
out, pos, n = [], 0, 0
for m in re.finditer(r"struct (attention\w+_kernel) \{", src):
    a = m.start()
    b = src.index("\n};\n", a)
    body = src[a:b]
    if "args.next_setup_arrived" not in body:
        continue
    def sub(old, new, count=1):
        global body
        assert body.count(old) == count, (m.group(1), old)
        body = body.replace(old, new)
    sub("    struct consumer_state {\n", "    struct consumer_state {\n      kittens::semaphore *tkc_pf; // the next task's q, not yet loaded\n      int tkc_pf_b, tkc_pf_h, tkc_pf_i;\n")
    sub("        // The previous task's store may still read the copy loaded next.\n        kittens::tma::store_async_read_wait<0>();\n", "")
    ld = re.search(r"\n        if \(args\.next_num_iters >= 0\) \{\n(.*?)\n        \}\n", body, re.S)
    assert ld, m.group(1)
    load = ld.group(1)
    body = body[:ld.start()] + "\n" + body[ld.end():]
    load = load.replace("args.next_common.", "args.state.tkc_pf_").replace("args.next_setup_arrived", "*args.state.tkc_pf")
    issue = ("      if (args.state.tkc_pf != nullptr) {\n        if (kittens::warpgroup::laneid() == 0) {\n"
             "          kittens::tma::store_async_read_wait<0>();\n" + load + "\n        }\n"
             "        args.state.tkc_pf = nullptr;\n      }\n")
    sub("      kittens::wait(args.setup_arrived, args.setup_phase);\n",
        "      args.state.tkc_pf = args.next_num_iters >= 0 ? &args.next_setup_arrived : nullptr;\n"
        "      args.state.tkc_pf_b = args.next_common.b;\n      args.state.tkc_pf_h = args.next_common.h;\n"
        "      args.state.tkc_pf_i = args.next_common.i;\n"
        "      kittens::wait(args.setup_arrived, args.setup_phase);\n")
    end = "        kittens::arrive(args.inputs_finished); // this warp is done with the stage\n    }\n"
    sub(end, end[:-6] + "\n" + issue.replace("      ", "      ", 1) + "    }\n")
    f = re.search(r"    finish\(kittens::lcf::consumer_finish_args<\w+> &args\) \{\n      const int tkc_wg = kittens::warpgroupid\(\);\n", body)
    assert f, m.group(1)
    body = body[:f.end()] + issue + body[f.end():]
    out.append(src[pos:a] + body)
    pos = b
    n += 1
assert n > 0, "no kernel loads q ahead"
out.append(src[pos:])
open(path, "w").write("".join(out))
print("late_q: %d kernels edited" % n, file=sys.stderr)
