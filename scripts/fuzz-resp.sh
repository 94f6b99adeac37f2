#!/usr/bin/env bash
# Builds the libFuzzer harness for the RESP parser (its sources alone, with the fuzzer and
# AddressSanitizer) and runs it on the committed seed corpus for FUZZ_SECONDS (default 60).
# New inputs go to a scratch corpus ($FUZZ_OUT, default .build-fuzz, /corpus), so the committed one stays small;
# crashes are written there as crash-* files.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN="${FUZZ_SECONDS:-60}"
OUT="${FUZZ_OUT:-.build-fuzz}"
mkdir -p "$OUT/corpus"
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name RESPFuzz \
    Examples/KeyValueCore/RESPParser.swift \
    Examples/KeyValueCore/RESPParser+Inline.swift \
    Examples/KeyValueCore/RESPProtocolError.swift \
    Fuzz/RESPParserFuzzer.swift \
    -o "$OUT/resp-parser-fuzzer"
"$OUT/resp-parser-fuzzer" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=10 \
    -artifact_prefix="$OUT/" -print_final_stats=1 "$OUT/corpus" Fuzz/corpus/resp
