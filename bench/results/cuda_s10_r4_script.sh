#!/bin/bash
# s10 r4: the decode form's quiet-tile skip (online_softmax<..., kQuietSkip>): GPU tests and
# conformance on the new build, then decode A/B (old = HEAD's binary, new) alternating, 2 rounds.
cd "$(dirname "$0")/.." && R=$PWD
mkdir -p /tmp/b && tar xzf .devbin/bin.tgz -C /tmp/b && tar xzf .devbin/old.tgz -C /tmp/b && export LD_LIBRARY_PATH=/tmp/b/lib
mkdir -p /tmp/o; SECONDS=0
/tmp/b/attnkit_test_backends --gtest_brief=1 > /tmp/o/tests.log 2>&1; echo "backends rc=$? $(tail -3 /tmp/o/tests.log | tr '\n' ' ')"
/tmp/b/attnkit_test_conformance --gtest_brief=1 > /tmp/o/conf.log 2>&1; echo "conformance rc=$? $(grep -E 'PASSED|FAILED|cells' /tmp/o/conf.log | tail -4 | tr '\n' ' ') ${SECONDS}s"
for round in 1 2; do
  /tmp/b/attnkit_old bench --device cuda --suite decode --out /tmp/o/ab_old_$round.jsonl > /dev/null 2>&1
  /tmp/b/attnkit bench --device cuda --suite decode --out /tmp/o/ab_new_$round.jsonl > /dev/null 2>&1
  echo "round $round ${SECONDS}s"
done
python3 - <<'PY' > $OUT/s10r4_ab.jsonl
import json
for r in (1, 2):
    for ab in ('old', 'new'):
        for l in open(f'/tmp/o/ab_{ab}_{r}.jsonl'):
            d = json.loads(l); d['ab'] = ab; d['round'] = r; print(json.dumps(d))
PY
cp /tmp/o/tests.log $OUT/s10r4_tests.log; cp /tmp/o/conf.log $OUT/s10r4_conformance.log
