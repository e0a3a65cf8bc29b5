#!/usr/bin/env bash
# ncu SASS + stall samples of our kernels (bench/NOTES.md, session 13): the shipped spec and
# the two-warpgroup + turns probe, at D and N from the environment (default 64, 4096).
# Usage (on the GPU machine, .gen-py carried): OUT=<dir> bench/attention/profile/sass_ours.sh
set -u
export TKC_EXECUTABLE=$PWD/.gen-py/bin/tkc TKC_INCLUDE_DIR=$PWD/kittens/include:$PWD/runtime/include PYTHONPATH=$PWD/python TKC_CACHE_DIR=$(mktemp -d)
export TKC_REAL=$TKC_EXECUTABLE
D=${D:-64}; N=${N:-4096}
run() { # tag spec tool
  SPEC=$2 TKC_TOOL=$3 BASELINE=0 python3 bench/attention/profile_pair.py $D $N >/dev/null 2>&1
  SPEC=$2 TKC_TOOL=$3 BASELINE=0 ncu --launch-skip 1 --launch-count 1 -k regex:'^kernel' --section SourceCounters --section WarpStateStats --section SpeedOfLight -o $OUT/$1 python3 bench/attention/profile_pair.py $D $N > $OUT/$1.ncu.log 2>&1
  ncu -i $OUT/$1.ncu-rep --page source --csv --print-source sass > $OUT/$1-sass.csv 2>>$OUT/$1.ncu.log
  ncu -i $OUT/$1.ncu-rep --page details > $OUT/$1-details.txt 2>&1
  rm -f $OUT/$1.ncu-rep
}
run shipped-d$D kernels-spec/attention_fwd.yaml $TKC_EXECUTABLE
export VPERL="$(cat bench/attention/variants/turns_exp.perl)"; run wg2turns-d$D bench/attention/variants/attention_wg2.yaml bench/attention/tkc-edit
