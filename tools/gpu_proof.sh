#!/usr/bin/env bash
# tools/gpu_proof.sh: every GPU path of envdoctor, run once on a real GPU, its outputs kept (issue 33).
#
#   OUT=/some/dir tools/gpu_proof.sh        (from anywhere; it runs from the repository root)
#
# No install: PYTHONPATH is the repository and the interpreter is python3 (PYTHON overrides it). It never stops
# at a failure: each step has its own timeout, the whole run a budget (GPU_PROOF_BUDGET seconds, default 450, so it
# ends inside 8 minutes), and a step that needs a GPU where there is none is skipped with the reason. $OUT receives
# at most 8 files: summary.md (the steps and the snapshot vs nvidia-smi vs collect_env comparison), steps.tsv,
# snapshot.json, health.json, nccl_info.log, nccl_diagnose.json, nccl_inject_diagnose.json, and gpu_proof.tar.gz
# holding every step's stdout and stderr. tools/gpu_proof_check.py reads steps.tsv (CI: every GPU step skipped,
# nothing crashed). GPU_PROOF_BLOCK_TEXTUAL=1 makes `import textual` fail, to show no step needs it.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
OUT=${OUT:-$(mktemp -d -t gpu_proof.XXXXXX)}
mkdir -p "$OUT" || exit 2
PY=${PYTHON:-python3}
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
BUDGET=${GPU_PROOF_BUDGET:-450}
RESERVE=25  # kept for the comparison and the packing at the end
W=$(mktemp -d -t gpu_proof_work.XXXXXX)
STEPS="$W/steps.tsv"
START=$(date +%s)
if [ "${GPU_PROOF_BLOCK_TEXTUAL:-0}" = 1 ]; then  # prove the CLI needs no Textual (the device has none)
  mkdir -p "$W/no_textual/textual"
  echo 'raise ImportError("textual is blocked by GPU_PROOF_BLOCK_TEXTUAL=1")' >"$W/no_textual/textual/__init__.py"
  export PYTHONPATH="$W/no_textual:$PYTHONPATH"
fi
printf 'step\tstatus\trc\tseconds\tnote\n' >"$STEPS"

left() { echo $((BUDGET - ($(date +%s) - START))); }
note_of() { tr '\t\n' '  ' <<<"$1" | cut -c1-300; }
record() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$(note_of "$5")" >>"$STEPS"; echo "gpu_proof: $1: $2 $5"; }

skip() {  # skip NAME REASON
  echo "SKIPPED: $2" >"$W/$1.out"
  record "$1" skipped - 0 "$2"
}

# step NAME CAP_SECONDS CMD...: runs CMD with stdout to $W/NAME.out, stderr to $W/NAME.err, bounded by the
# smaller of CAP_SECONDS and what is left of the budget.
step() {
  local name=$1 cap=$2
  shift 2
  local avail=$(( $(left) - RESERVE ))
  if [ "$avail" -lt 10 ]; then skip "$name" "the run's budget of ${BUDGET}s is spent"; return 0; fi
  local t=$(( cap < avail ? cap : avail ))
  local t0 rc secs status note
  t0=$(date +%s)
  timeout -k 10 "$t" "$@" >"$W/$name.out" 2>"$W/$name.err"
  rc=$?
  secs=$(( $(date +%s) - t0 ))
  note=""
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then status=timeout; note="stopped after ${t}s"
  elif grep -q "Traceback (most recent call last)" "$W/$name.err" "$W/$name.out" 2>/dev/null; then
    status=crashed; note=$(grep -v '^\s*$' "$W/$name.err" | tail -n 1)
  elif [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; then status=ok; [ "$rc" -eq 1 ] && note="exit 1: findings or a failed test"
  else status=failed; note=$(grep -v '^\s*$' "$W/$name.err" | tail -n 1)
  fi
  record "$name" "$status" "$rc" "$secs" "$note"
}

ED=("$PY" -m envdoctor)

# --- is there a GPU? ------------------------------------------------------------------------------------------
SMI=$(command -v nvidia-smi || true)
CUDA_WHY=$(timeout 120 "$PY" - <<'EOF' 2>&1
try:
    import torch
except Exception as exc:
    print("torch does not import: %s" % exc)
else:
    if not torch.cuda.is_available():
        print("torch %s sees no CUDA device (CUDA build: %s)" % (torch.__version__, torch.version.cuda or "none, CPU-only"))
EOF
)
[ $? -eq 124 ] && CUDA_WHY="torch.cuda.is_available() did not answer in 120 s"
GPU_WHY=""
if [ -n "$CUDA_WHY" ]; then
  if [ -n "$SMI" ]; then GPU_WHY="no usable GPU: nvidia-smi is at $SMI but $CUDA_WHY"
  else GPU_WHY="no usable GPU: nvidia-smi not found; $CUDA_WHY"; fi
fi
DS_WHY=""
if ! timeout 60 "$PY" -c "import deepspeed" >/dev/null 2>"$W/deepspeed_import.err"; then
  DS_WHY="DeepSpeed does not import: $(grep -v '^\s*$' "$W/deepspeed_import.err" | tail -n 1)"
fi
echo "gpu_proof: OUT=$OUT budget=${BUDGET}s ${GPU_WHY:-GPU present}"

gpu_step() {  # gpu_step NAME CAP CMD...: a step that needs a CUDA GPU
  if [ -n "$GPU_WHY" ]; then skip "$1" "$GPU_WHY"; else step "$@"; fi
}

# --- the machine as the vendor tools see it -------------------------------------------------------------------
if [ -n "$SMI" ]; then step nvidia_smi_q 30 "$SMI" -q; else skip nvidia_smi_q "nvidia-smi not found on PATH"; fi
step collect_env 90 "$PY" -m torch.utils.collect_env

# --- probe, diagnose, plan (these run everywhere) -------------------------------------------------------------
step snapshot 120 "$PY" -m envdoctor snapshot -o "$W/snapshot.json"
step check 120 "${ED[@]}" check --json
step fix_dry_run 120 "${ED[@]}" fix --dry-run --json
step health 20 "$PY" - "$W/snapshot.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
gpus = doc.get("gpus") if isinstance(doc.get("gpus"), list) else []
out = {"gpus": [{k: g.get(k) for k in ("index", "name", "pci_bus_id", "persistence_mode", "ecc_uncorrected",
                                       "retired_pages_pending", "health")} for g in gpus],
       "absent": {k: v for k, v in (doc.get("absent") or {}).items() if k.startswith("gpus")},
       "note": None if gpus else "the snapshot lists no GPU: %s" % (doc.get("absent") or {}).get("gpus", "none found")}
json.dump(out, open(sys.argv[1].replace("snapshot.json", "health.json"), "w"), indent=1)
print(json.dumps(out, indent=1))
EOF

# --- GPU self-tests -------------------------------------------------------------------------------------------
# (the gpu test asked for by name skips itself without CUDA: run it everywhere, so CI exercises its skip)
step selftest_gpu 150 "${ED[@]}" selftest gpu --json

# A real NCCL INFO log of a one-rank all-reduce, and `nccl diagnose` on it.
cat >"$W/nccl_allreduce.py" <<'EOF'
import datetime, os, sys
import torch
import torch.distributed as dist
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(0)  # every rank on GPU 0: one GPU is all there is
dist.init_process_group("nccl", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=45))
t = torch.full((1 << 20,), float(rank + 1), device="cuda:0")
dist.all_reduce(t)
torch.cuda.synchronize()
expect = world * (world + 1) / 2
print("rank %d: all_reduce sum %s (expected %s)" % (rank, t[0].item(), expect))
dist.destroy_process_group()
sys.exit(0 if t[0].item() == expect else 1)
EOF
# nccl_ranks.sh WORLD LOG [ENV=VALUE ...]: WORLD ranks on GPU 0 with NCCL_DEBUG=INFO, all their output to LOG.
cat >"$W/nccl_ranks.sh" <<'EOF'
world=$1 log=$2
shift 2
port=$("$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
: >"$log"
pids=()
rc=0
for ((r = 0; r < world; r++)); do
  env "$@" NCCL_DEBUG=INFO MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" RANK=$r WORLD_SIZE="$world" \
    timeout -k 5 75 "$PY" "$(dirname "$0")/nccl_allreduce.py" >>"$log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
exit "$rc"
EOF
export PY
gpu_step nccl_info 90 bash "$W/nccl_ranks.sh" 1 "$W/nccl_info.log"
if [ -s "$W/nccl_info.log" ]; then step nccl_diagnose 60 "${ED[@]}" nccl diagnose --json "$W/nccl_info.log"
else skip nccl_diagnose "no NCCL log: ${GPU_WHY:-the one-rank run wrote nothing}"; fi

gpu_step selftest_allreduce_nccl 150 "${ED[@]}" selftest allreduce --backend nccl --nproc 1 --json
gpu_step selftest_collectives 150 "${ED[@]}" selftest collectives --backend nccl --nproc 1 --json
gpu_step selftest_backward 180 "${ED[@]}" selftest backward --json
gpu_step selftest_compile 180 "${ED[@]}" selftest compile --json

# One failure injected honestly: two ranks sharing GPU 0, P2P off, NCCL's sockets on an interface that does not exist.
gpu_step nccl_inject 90 bash "$W/nccl_ranks.sh" 2 "$W/nccl_inject.log" NCCL_SOCKET_IFNAME=nonexistent NCCL_P2P_DISABLE=1
if [ -s "$W/nccl_inject.log" ]; then step nccl_inject_diagnose 60 "${ED[@]}" nccl diagnose --json "$W/nccl_inject.log"
else skip nccl_inject_diagnose "no NCCL log: ${GPU_WHY:-the injected run wrote nothing}"; fi

gpu_step selftest_gpu_stress 150 "${ED[@]}" selftest gpu --stress 20 --json
if [ -n "$DS_WHY" ]; then skip selftest_zero3 "$DS_WHY"; else gpu_step selftest_zero3 240 "${ED[@]}" selftest zero3 --json; fi

# --- the comparison and the outputs ---------------------------------------------------------------------------
RESERVE=0
step compare 30 "$PY" "$ROOT/tools/gpu_compare.py" "$W/snapshot.json" "$W/nvidia_smi_q.out" "$W/collect_env.out" \
  -o "$W/compare.md"
TOTAL=$(( $(date +%s) - START ))
printf 'END\tdone\t-\t%s\t%s\n' "$TOTAL" "$(note_of "${GPU_WHY:-GPU present}")" >>"$STEPS"
{
  echo "# gpu_proof: $(date -u +%Y-%m-%dT%H:%M:%SZ), ${TOTAL}s (budget ${BUDGET}s)"
  echo
  echo "- host: $(uname -srm); python: $("$PY" -V 2>&1); ${GPU_WHY:-GPU present}"
  echo
  echo "| step | status | rc | seconds | note |"
  echo "|---|---|---|---|---|"
  tail -n +2 "$STEPS" | awk -F'\t' '{printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5}'
  echo
  cat "$W/compare.md" 2>/dev/null || echo "(no comparison: see compare.err)"
} >"$W/summary.md"
cp "$W/summary.md" "$W/steps.tsv" "$OUT/"
keep() {  # keep FILE NAME: copy a step's output to $OUT unless it is empty or a skip note
  [ -s "$1" ] && ! grep -q '^SKIPPED: ' "$1" && cp "$1" "$OUT/$2"
}
keep "$W/snapshot.json" snapshot.json
keep "$W/health.json" health.json
keep "$W/nccl_info.log" nccl_info.log
keep "$W/nccl_diagnose.out" nccl_diagnose.json
keep "$W/nccl_inject_diagnose.out" nccl_inject_diagnose.json
tar -czf "$OUT/gpu_proof.tar.gz" -C "$W" . || echo "gpu_proof: packing failed"
rm -rf "$W"
echo "gpu_proof: done in ${TOTAL}s; outputs in $OUT"
exit 0
