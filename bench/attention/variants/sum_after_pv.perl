s/(\n[ \t]*row_vector t1;\n.*?kittens::apply\(args\.state\.l,.*?\n[ \t]*\}\);\n)(.*?kittens::warpgroup::mma_AB\(args\.state\.o, tkc_p_bf16, args\.input\.v, true\);\n)/\n$2$1/gs
