#!/usr/bin/env bash
# `make fuzz`: libFuzzer (swiftc -sanitize=fuzzer,address) on loopkv's request path, two harnesses:
#   parser    Fuzz/RESPParserFuzzer.swift with the parser's sources alone: whole vs chunked
#             parses must agree, every step in bounds (seeds: Fuzz/corpus/resp);
#   commands  Fuzz/CommandFuzzer.swift with KeyValueCore (but the loop-driven sweeper, the one
#             file that needs the library): every request gets exactly one well-formed reply, on
#             a store whose clock moves (seeds: Fuzz/corpus/commands);
#   tcp       Fuzz/TCPInputBufferFuzzer.swift with TCPConnection's input buffer
#             (TCPByteBuffer.swift): programs of socket reads, consumption, read(exactly:) and
#             resumable read(upTo:) searches, checked against a plain array (seeds:
#             Fuzz/corpus/tcp-input).
# Each runs FUZZ_SECONDS (default 60). New inputs go to $FUZZ_OUT/corpus-* (default .build-fuzz),
# so the committed seed corpora stay small; crashes are written to $FUZZ_OUT as crash-* files.
# FUZZ_TARGETS selects harnesses (default "parser commands").
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN="${FUZZ_SECONDS:-60}"
OUT="${FUZZ_OUT:-.build-fuzz}"
TARGETS="${FUZZ_TARGETS:-parser commands tcp}"
CORE=Examples/KeyValueCore
mkdir -p "$OUT"
# ld.gold warns about every ASan assembly helper it cannot export; nothing to act on.
quiet_link() { "$@" 2> >(grep -v "Cannot export local symbol" >&2); }

for target in $TARGETS; do
    case "$target" in
    parser)
        quiet_link swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name RESPFuzz \
            "$CORE/RESPParser.swift" "$CORE/RESPParser+Inline.swift" "$CORE/RESPProtocolError.swift" \
            Fuzz/RESPParserFuzzer.swift -o "$OUT/resp-parser-fuzzer"
        binary="$OUT/resp-parser-fuzzer"
        seeds=Fuzz/corpus/resp
        ;;
    commands)
        sources=()
        for file in "$CORE"/*.swift; do
            [ "$(basename "$file")" = ExpirySweeper.swift ] || sources+=("$file")
        done
        quiet_link swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name CommandFuzz \
            "${sources[@]}" Fuzz/CommandFuzzer.swift -o "$OUT/command-fuzzer"
        binary="$OUT/command-fuzzer"
        seeds=Fuzz/corpus/commands
        ;;
    tcp)
        quiet_link swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name TCPFuzz \
            Sources/TomorrowlandLoop/TCP/TCPByteBuffer.swift Fuzz/TCPInputBufferFuzzer.swift \
            -o "$OUT/tcp-input-fuzzer"
        binary="$OUT/tcp-input-fuzzer"
        seeds=Fuzz/corpus/tcp-input
        ;;
    *)
        echo "fuzz: unknown target $target (parser, commands, tcp)" >&2
        exit 2
        ;;
    esac
    mkdir -p "$OUT/corpus-$target"
    echo "fuzz: $target for $SECONDS_TO_RUN s"
    SWIFT_BACKTRACE=enable=no "$binary" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=10 \
        -artifact_prefix="$OUT/$target-" -print_final_stats=1 "$OUT/corpus-$target" "$seeds"
done
