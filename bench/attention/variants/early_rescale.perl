s/(\n[ \t]*kittens::rt_fl<16, (?:128|192)> p;\n)(.*?)(\n[ \t]*row_vector r8;\n.*?kittens::apply\(args\.state\.o, \[&\]\(const kittens::element &tkc_e\) \{\n.*?\n[ \t]*\}\);)/$3$1$2/gs
# Probe only (bench/NOTES.md, session 13).
