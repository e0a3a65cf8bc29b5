# Probe edit (not shipped; results in bench/results/attention_softmax_probes_h100_2026-11-22.log):
# the wait for o += P·V moved from the end of its iteration to the next iteration's score
# wait, and the stage released there through prev_inputs_finished (the last iteration waits
# and releases its own). Non-causal only (a warpgroup that stops early would never release
# its last stage). ptxas then injects a wait at the loop's back edge unless the LCF template
# waits once after the compute loop (`warpgroup::mma_async_wait<0>()`, added by hand for
# the probe). Use through bench/attention/tkc-edit: VPERL="$(cat defer_pv_wait.pl)".
s{(mma_ABt\(s, [^;]*;\n\s*kittens::warpgroup::mma_async_wait<0>\(\);\n)}{$1      if (args.prev_inputs_finished && kittens::laneid() == 0) kittens::arrive(*args.prev_inputs_finished); // PROBE deferred\n}g;
s{(\s*kittens::warpgroup::mma_AB\(args\.state\.o, tkc_p_bf16, args\.input\.v, true\);)\n\s*kittens::warpgroup::mma_async_wait<0>\(\);\n(\s*kittens::apply\(args\.state\.m, \[&\]\(const kittens::vector_element &tkc_e\) \{\n\s*return kittens::at\(m_new, tkc_e\);\n\s*\}\);)\n\s*if \(kittens::laneid\(\) == 0\)\n\s*kittens::arrive\(args\.inputs_finished\); // this warp is done with the stage\n}{\n$2$1\n      if (args.iter == args.num_iters - 1) { kittens::warpgroup::mma_async_wait<0>(); if (kittens::laneid() == 0) kittens::arrive(args.inputs_finished); }\n}g;
