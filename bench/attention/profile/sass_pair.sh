#!/usr/bin/env bash
# ncu per-instruction SASS + stall samples for our kernel and cuDNN's at one configuration
# (bench/NOTES.md, session 13). Usage (GPU machine, .gen-py carried):
#   OUT=<dir> bench/attention/profile/sass_pair.sh D N TAG
set -u
export TKC_EXECUTABLE=$PWD/.gen-py/bin/tkc TKC_INCLUDE_DIR=$PWD/kittens/include:$PWD/runtime/include PYTHONPATH=$PWD/python TKC_CACHE_DIR=$(mktemp -d)
D=$1; N=$2; tag=$3
python3 bench/attention/profile_pair.py $D $N >/dev/null 2>&1   # compile once
for who in ours cudnn; do
  if [[ $who == ours ]]; then k=regex:^kernel; else k=regex:flash_fprop; fi
  ncu --launch-skip 1 --launch-count 1 -k $k --section SourceCounters --section WarpStateStats --section SpeedOfLight -o $OUT/$tag-$who python3 bench/attention/profile_pair.py $D $N > $OUT/$tag-$who.ncu.log 2>&1
  ncu -i $OUT/$tag-$who.ncu-rep --page source --csv --print-source sass > $OUT/$tag-$who-sass.csv 2>>$OUT/$tag-$who.ncu.log
  ncu -i $OUT/$tag-$who.ncu-rep --page details > $OUT/$tag-$who-details.txt 2>&1
  rm -f $OUT/$tag-$who.ncu-rep
done
