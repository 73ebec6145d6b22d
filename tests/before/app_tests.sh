#!/bin/bash
# The current program tests (tests/apps: test_resource_limits, test_apps_output,
# test_extrapolate) compiled with their XENC_APP_* paths pointing at the programs of an older
# build, and run one test at a time: what tests/README.md's "Failed before" table records for R
# and O. Not part of ctest.
#
#   bash tests/before/app_tests.sh OLD_BUILD CURRENT_BUILD WORK_DIR [TEST_FILTER...]
#
# OLD_BUILD: a Release build of the old tree with its apps (e.g. 63280be, see
# issue17_commands.sh); CURRENT_BUILD: a Release build of this tree (its libraries serve the tests'
# helpers). Without filters it runs the tests of issue 17's table. The programs run under the
# tests' own limits (an address-space cap of 1.5 GiB, 60 s); each test binary runs under
# prlimit --as=4 GiB and a timeout of 900 s as well. One summary line per test; the full output
# is in WORK_DIR/logs/<test>.log.
set -u
old=$(cd "${1:?old build directory}" && pwd)/apps
cur=$(cd "${2:?current build directory}" && pwd)
work=${3:?work directory}
shift 3
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work/bin" "$work/out" "$work/logs" || exit 1

defs=(-DHAVE_CBLAS=1
  "-DXENC_APP_ATTENTION_MAP=\"$old/attention_map/xenc-attention-map\""
  "-DXENC_APP_ENCODE=\"$old/encode/xenc-encode\""
  "-DXENC_APP_EXTRAPOLATE=\"$old/extrapolate/xenc-extrapolate\""
  "-DXENC_APP_INIT_ENCODER=\"$old/encode/xenc-init-encoder\""
  "-DXENC_APP_PE_HEATMAP=\"$old/pe_heatmap/xenc-pe-heatmap\""
  "-DXENC_APP_PE_PITFALLS=\"$old/pe_pitfalls/xenc-pe-pitfalls\""
  "-DXENC_APP_PE_PROPERTIES=\"$old/pe_properties/xenc-pe-properties\""
  "-DXENC_APP_TRAIN_ORDER=\"$old/train_order/xenc-train-order\""
  "-DXENC_APP_WORD_ORDER=\"$old/word_order/xenc-word-order\""
  "-DXENC_SOURCE_DIR=\"$src\""
  "-DXENC_TEST_OUT_DIR=\"$work/out\"")
for t in test_resource_limits test_apps_output test_extrapolate; do
  c++ "${defs[@]}" -I"$src/tests" -I"$src/apps" -I"$src/lib/include" -I"$cur/lib/include" \
    -isystem /usr/include/libxml2 -O2 -DNDEBUG -std=c++17 -c "$src/tests/apps/$t.cpp" \
    -o "$work/bin/$t.o" &&
    c++ "$work/bin/$t.o" -o "$work/bin/$t" -Wl,-rpath,"$cur/lib" "$cur/lib/libxencoder_io.so" \
      "$cur/lib/libxencoder.so" -lgtest_main -lgtest -lxml2 -lopenblas -lpthread || exit 1
done

tests=("$@")
if [[ ${#tests[@]} -eq 0 ]]; then
  tests=(
    R:TrainOrderLimits.ALongSentenceIsRefusedBeforeTheCheckpointLoads
    R:TrainOrderLimits.ALongSentenceIsRefusedByItsTime
    R:EncodeLimits.TwentyThousandTokensRunInTiles
    R:EncodeLimits.ALongInputIsRefusedByItsTime
    R:EncodeLimits.ALongInputIsRefusedFromItsHeader
    R:EncodeLimits.HugeWeightsAreRefusedFromTheHeaders
    R:ExtrapolateLimits.AStepOverTheMemoryLimitIsRefusedFromTheOptions
    R:AttentionMapLimits.HugeWeightsAreRefusedFromTheHeaders
    R:AttentionMapLimits.SvgOverTheOutputLimitIsRefusedBeforeWriting
    R:AttentionMapLimits.SvgSizeEstimateMatchesTheFile
    R:TrainOrderLimits.EvaluateOntoTheLoadedCheckpointIsRefused
    R:TrainOrderLimits.NonFiniteLogitsFailLoudly
    R:TrainOrderLimits.SettingsAndDirectoriesAreCheckedBeforeTraining
    R:TrainOrderLimits.AFailedWriteToStdoutExitsNonZero
    R:EveryApp.AnUnusableSvgDirIsRefusedFirst
    R:InitEncoderLimits.HoursOfTrainingAreRefusedUpFront
    R:InitEncoderLimits.TheMeasuredRateStopsARunOverTheLimit
    R:ExtrapolateLimits.DaysOfTrainingAreRefusedUpFront
    R:ExtrapolateLimits.TheMeasuredRateStopsARunOverTheLimit
    R:WordOrderLimits.ALongSentenceIsRefusedNamingTheLength
    R:WordOrderLimits.AnOddDimensionSuggestsTheSchemesThatTakeIt
    R:Extremes.Encode R:Extremes.PePitfalls R:Extremes.PeProperties R:Extremes.WordOrder
    R:Extremes.AttentionMap R:Extremes.PeHeatmap
    O:EveryApp.AFailedWriteToStdoutExitsNonZero
    O:EveryApp.NegativeAndOutOfRangeNumbersAreRefused
    E:Extrapolate.FigureHasALinePerSchemeAndTheTrainLengthMarker)
fi
for spec in "${tests[@]}"; do
  case ${spec%%:*} in
    R) bin=test_resource_limits ;;
    O) bin=test_apps_output ;;
    E) bin=test_extrapolate ;;
    *) echo "unknown test spec $spec (R:, O: or E: then a gtest filter)" >&2; exit 2 ;;
  esac
  name=${spec#*:}
  start=$(date +%s.%N)
  prlimit --as=$((4 << 30)) timeout 900 "$work/bin/$bin" --gtest_filter="$name" \
    >"$work/logs/$name.log" 2>&1
  rc=$?
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  verdict=$([[ $rc -eq 0 ]] && echo passed || echo FAILED)
  printf '%-70s %-6s (exit %d, %.1f s)\n' "$name" "$verdict" "$rc" "$secs"
done
