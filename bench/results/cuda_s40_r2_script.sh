#!/bin/bash
# s40 device run 2: the merged main's CUDA build. The runtime tests (GPU cases), the CUDA_FLASH /
# CUDA_MLA GPU tests that run 1's 180 s limit cut off (the 38 it passed are filtered out), a
# sliding-window model whose four requests fit a 100 MiB budget only with blocks allocated chunk
# by chunk (gemma-3-1b-it: 4 x 1608 tokens in 256-token chunks need 1581 of 1600 blocks; admitted
# whole they needed 2829), and plan's count for it.
cd "$(dirname "$0")/../.." && rm -rf /tmp/z && mkdir -p /tmp/z
tar xJf .devbin/s40/bin2.txz -C /tmp/z
export LD_LIBRARY_PATH=/tmp/z/lib ATTNKIT_MODELS_DIR=$PWD/models
W=/tmp/w S=/tmp/w/summary.txt
rm -rf $W && mkdir -p $W && SECONDS=0
save() { cp $S $OUT/summary.txt; tar czf $OUT/r2.tgz -C $W . ; }
timeout 150 /tmp/z/attnkit_test_runtime > $W/runtime_tests.txt 2>&1
echo "runtime tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $W/runtime_tests.txt | head -3 | tr '\n' ';') ${SECONDS}s" >> $S; save
args="--model gemma-3-1b-it --requests 4 --prompt-len 1600 --decode-steps 8 --max-tokens-per-step 256 --memory 100MiB"
timeout 120 /tmp/z/attnkit run --device cuda --verify $args > $W/run_gemma3_chunked.log 2>&1
echo "run cuda '$args' rc=$? $(grep -E 'KV cache|verification' $W/run_gemma3_chunked.log | tr '\n' ';') ${SECONDS}s" >> $S
timeout 60 /tmp/z/attnkit plan --model gemma-3-1b-it --device cuda --memory 100MiB --max-tokens-per-step 256 > $W/plan_gemma3.txt 2>&1
echo "plan rc=$? $(grep 'memory 100' $W/plan_gemma3.txt)" >> $S; save
timeout 330 /tmp/z/attnkit_test_backends --gtest_filter='CudaFlash*:CudaMla*:-CudaFlash.DecodeGqaBf16Head128:CudaFlash.PrefillFp16Head64PageOne:CudaFlash.NonCausalMqaHead256:CudaFlash.WindowSoftcapAlibiSinks:CudaFlash.PrefixLmRangesWidenRows:CudaFlash.PrefixLmRangesThatWidenNoRowKeepThePlan:CudaFlash.PrefixLmRangesRefusedWhereNotBuilt:CudaFlash.NonCausalTwoSidedWindow:CudaFlash.Fp8E4m3PerTensor:CudaFlash.Fp8E5m2PerHead:CudaFlash.ForcedSplitsWithSinksAndShortKeys:CudaFlash.DecodeFormEveryFeature:CudaFlash.TwoMTilePrefillAndRegisterFp8Decode:CudaFlash.Fp8DecodeFormWideHeads:CudaFlash.Fp8SpeculativeDecodeTakesTheDecodeForm:CudaFlash.PrefillOutputRowsOfAnyAlignment:CudaFlash.PagesHoldingWholeTiles:CudaFlash.GrowingLogitsRescaleAcrossTiles:CudaFlash.EveryManifestHeadPair:CudaFlash.HopperPrefillForm:CudaFlash.HopperFp8FormSmall:CudaFlash.WideHead512:CudaFlash.MlaLatentDecode:CudaFlash.MlaRaggedDecode:CudaFlash.MlaAndFlashRefuseTheOtherCacheForm:CudaFlash.MlaHopperFormRefusesWhatItCannotRun:CudaFlash.MlaGraphCaptureDecodeSplits:CudaFlash.MlaMixedBatchesRunAsTwoParts:CudaFlash.HeuristicSplitsLongDecode:CudaFlash.DecodeSplitsSettledByPageSize:CudaFlash.HopperHead64SplitsCountOneCtaPerSm:CudaFlash.GraphCaptureReplanReplay:CudaFlash.MixedBatchesRunEachKindAsItsOwnPart:CudaFlash.GraphCaptureTwoPartsReplanReplay:CudaFlash.GraphCapturePrefixLmReplanReplay:CudaFlash.GraphCaptureDecodeSplits:CudaFlash.BackToBackDecodeCallsShareTheWorkspace:CudaFlash.RaggedDecodeSplitsPerSequence' > $W/cuda_tests.txt 2>&1
echo "cuda tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' $W/cuda_tests.txt | head -4 | tr '\n' ';') ${SECONDS}s" >> $S
save
cat $S
