# Reliability targets (docs/reliability.md). The normal suite is .ci/run.
.PHONY: soak fuzz

# SIGKILL crash loop: 100 kill/restart cycles of a `muster serve` child process.
soak:
	MUSTER_SOAK=1 go test -run TestCrashLoop -count=1 -timeout 60m -v ./test/reliability

# Every fuzzer for FUZZTIME each (default 60s).
FUZZTIME ?= 60s
fuzz:
	go test ./internal/wire -run '^$$' -fuzz '^FuzzReadFrame$$' -fuzztime $(FUZZTIME)
	go test ./internal/wire -run '^$$' -fuzz '^FuzzParseHeader$$' -fuzztime $(FUZZTIME)
	go test ./internal/server -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME)
	go test ./internal/coordinator -run '^$$' -fuzz '^FuzzDec$$' -fuzztime $(FUZZTIME)
	go test ./internal/coordinator -run '^$$' -fuzz '^FuzzReplay$$' -fuzztime $(FUZZTIME)
