s/(\n([ \t]*)if \(\(long long\)\(args\.common\.i \* 3 \+ tkc_wg\) \* 64 >= args\.globals\.N\)\n[ \t]*args\.compute_iters = 0;)/\n$2\/\/ probe: idle warpgroups still take their turns (they compute on rows finish does not store)/g;
# Probe only (bench/NOTES.md, session 13).
s/(\n([ \t]*)kittens::rt_fl<16, (?:128|192)> p;\n)/\n$2kittens::named_sync(10 + tkc_wg, 256); \/\/ probe: this warpgroup's turn for the exponentials$1/g;
s/(\n([ \t]*)kittens::warpgroup::mma_AB\(args\.state\.o, tkc_p_bf16,)/\n$2kittens::named_arrive(10 + (tkc_wg + 1) % 3, 256); \/\/ probe: the next one's turn$1/g;
s/(\n([ \t]*)kittens::wait\(args\.setup_arrived, args\.setup_phase\);)/\n$2if (args.task_iter == 0 && tkc_wg == 2) kittens::named_arrive(10, 256); \/\/ probe: warpgroup 0 first$1/g;
s/(\n([ \t]*)if \(kittens::laneid\(\) == 0\)\n[ \t]*kittens::arrive\(args\.finish_finished\);)/\n$2if (args.next_num_iters < 0 && tkc_wg == 0) kittens::named_sync(10, 256); \/\/ probe: the last turn handed over$1/g;
