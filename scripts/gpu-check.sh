#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU and its driver and nothing else (no CUDA
# toolkit, no internet). Takes the bundle of scripts/gpu-bundle.sh (gpu-bundle/ beside the
# working tree) and, within about 8 minutes on an H100 with 16 cores:
#   1. nvidia-smi: the GPU, its driver and the CUDA version the driver supports;
#   2. atomzero gpu-check --device cuda: Burn's CUDA forward pass against the CPU's on the
#      tiny and default nets (two processes at once), one training step's losses and
#      gradients against the CPU engines' (tolerances in crates/bench/src/gpu.rs and
#      docs/gpu.md); about 2.5 minutes on an H200, most of it kernel compilation;
#   3. atomzero bench net --device cuda --batches 256,1024: inference positions/s and
#      training samples/s of both nets (--batches 256,512,1024 adds configs/default.toml's
#      training batch); 156 s for the default net's rows on an H200, the tiny net's on top;
#   4. atomzero run with configs/default.toml (device cuda, eval_games = 0) for what is left
#      of --budget seconds (default 480) less 40 s, at most --run-minutes (default 5): under
#      2.5 minutes with the defaults on an H200 (--budget 700 gives the whole 5 minutes),
#      nvidia-smi sampling the GPU every second: self-play positions/s and the network's
#      positions/s as the run reports them (a line every 30 s), training samples/s if a
#      generation's self-play finishes in time, and the GPU's busy share (the mean of
#      nvidia-smi's utilization.gpu: the share of each second during which a kernel ran).
#      --run-games N: a generation of N games (games_per_generation = N, spread over the
#      workers at once) and --run-steps S training steps, so that a short run reaches
#      training and prints its samples/s (configs/default.toml's 5,000 games do not finish
#      in minutes; no gate either, gate_games = 0, so the generation's summary line with
#      its samples/s follows the training at once); --run-visits V: searches of V visits
#      (cheap ones V/4) instead of 800/160, so that such a generation finishes sooner.
# With --wgpu instead: steps 1-3 on the wgpu backend (Vulkan on the NVIDIA driver; the
# bundle's libvulkan.so.1 is used where the machine has no Vulkan loader, and an ICD file
# naming the driver's libGLX_nvidia.so.0 is written where the driver installed none).
# Optional steps (--steps), for finding faults:
#   sweep: atomzero gpu-check --conv-sweep: one 3x3 convolution of several shapes against the
#      CPU (forward, weight gradient, two rewrites), with CubeCL's autotune log (which kernel
#      each shape chose, and the candidates' times) written to DIR/autotune.log;
#   nopad: step 2 on the tiny net with ATOMZERO_CONV_PAD=0: the convolutions unpadded (GPU
#      devices pad their input channels to a multiple of 32 by default, because burn-cubecl
#      0.22.1's weight gradient is wrong for 16, 20 and 24 input channels; docs/gpu.md). A
#      control: it FAILS on stem.conv.weight while that fault is there; when it passes after
#      a Burn upgrade, the padding can go;
#   selfplay: atomzero bench selfplay on the device with configs/default.toml's net and a
#      short search (32 visits full / 8 cheap, 16 games per worker, at most 120 plies): each
#      worker's own batch against one batch shared by all workers, each with the network's
#      busy share and its speed inside self-play against raw inference of the same batches
#      (why `run`'s GPU share is low). --selfplay-games N (default 256), limit --bench-seconds.
# With --cpu: a rehearsal on any machine (no GPU needed): the bundle, the binary, step 2 with
# the CPU against itself, step 3 as `bench net --device cpu --quick --config tiny`, step 4 on
# the CPU for --run-minutes (default 1 here) without nvidia-smi. It runs every part of the
# script that does not need a GPU.
#
# Usage: bash scripts/gpu-check.sh [--wgpu | --cpu] [--run-minutes M] [--budget S]
#                                  [--batches LIST] [--steps sweep,check,nopad,bench,selfplay,run]
#                                  [--nets tiny|default|both] [--check-seconds S]
#                                  [--bench-seconds S] [--selfplay-games N]
#                                  [--run-games N] [--run-steps S] [--run-visits V]
#                                  [--bundle DIR] [--out DIR]
# --nets: the nets of steps 2 and 3 (default both); --check-seconds: step 2's time limit (default
# 300: the default net's first training step compiles and autotunes its kernels for 1-2
# minutes); --bench-seconds: step 3's (default 300: on an H200 the default net's training
# batches did not finish compiling within 180 s).
# Everything printed is also written to DIR/gpu-check.log (default --out: a temporary dir,
# or $OUT where the machine provides one). Exit status: 0 when every step passed.
set -uo pipefail
cd "$(dirname "$0")/.."
bundle=gpu-bundle
route=cuda
run_minutes=""
budget=480
batches=256,1024
steps=check,bench,run
nets=both
check_seconds=300
bench_seconds=300
selfplay_games=256
run_games=""
run_steps=""
run_visits=""
out=${OUT:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --wgpu) route=wgpu; shift ;;
    --cpu) route=cpu; shift ;;
    --budget) budget=${2:?}; shift 2 ;;
    --run-minutes) run_minutes=${2:?}; shift 2 ;;
    --batches) batches=${2:?}; shift 2 ;;
    --steps) steps=${2:?}; shift 2 ;;
    --nets) nets=${2:?}; shift 2 ;;
    --check-seconds) check_seconds=${2:?}; shift 2 ;;
    --bench-seconds) bench_seconds=${2:?}; shift 2 ;;
    --selfplay-games) selfplay_games=${2:?}; shift 2 ;;
    --run-games) run_games=${2:?}; shift 2 ;;
    --run-steps) run_steps=${2:?}; shift 2 ;;
    --run-visits) run_visits=${2:?}; shift 2 ;;
    --bundle) bundle=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    *) echo "gpu-check: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [ -z "$run_minutes" ]; then
  run_minutes=5
  [ "$route" = cpu ] && run_minutes=1
fi
work=$(mktemp -d)
sampler=""
egl_first=""
other_icd=""
cleanup() {
  [ -n "$sampler" ] && kill "$sampler" 2> /dev/null
  rm -rf "$work"
}
trap cleanup EXIT
out=${out:-$(mktemp -d /tmp/gpu-check.XXXXXX)}
mkdir -p "$out"
out=$(cd "$out" && pwd) # absolute: the sweep runs in another directory
repo=$(pwd)
log="$out/gpu-check.log"
exec > >(tee "$log") 2>&1
start=$SECONDS
failed=()
step() { echo; echo "== [$((SECONDS - start)) s] $*"; }
# run_step SECONDS NAME COMMAND...: runs with a time limit and records a failure.
run_step() {
  local limit=$1 name=$2
  shift 2
  timeout -k 10 "$limit" "$@"
  local status=$?
  if [ "$status" != 0 ]; then
    failed+=("$name (exit $status$([ "$status" = 124 ] && echo ", over ${limit} s"))")
  fi
  return "$status"
}

step "bundle: $bundle"
cat "$bundle/MANIFEST" || { echo "no $bundle/MANIFEST: run scripts/gpu-bundle.sh first"; exit 1; }
if command -v xz > /dev/null; then
  xz -dc "$bundle/atomzero.xz" > "$work/atomzero"
else
  python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
    "$bundle/atomzero.xz" "$work/atomzero"
fi
chmod +x "$work/atomzero"
bin="$work/atomzero"
(cd "$bundle" && grep -v '^commit\|^features\|^binary\|^dynamic' MANIFEST | sha256sum -c --quiet) ||
  failed+=("bundle checksums")
# libdevice: a toolkit's if the machine has one, else the bundle's.
if [ -z "${CUDA_PATH:-}" ] && [ ! -f /usr/local/cuda/nvvm/libdevice/libdevice.10.bc ]; then
  CUDA_PATH="$(pwd)/$bundle/cuda"
  export CUDA_PATH
fi
echo "CUDA_PATH=${CUDA_PATH:-} ($(ls "${CUDA_PATH:-/usr/local/cuda}/nvvm/libdevice/" 2> /dev/null))"
echo "CUDA toolkit on this machine: $(ls -d /usr/local/cuda*/ 2> /dev/null | tr '\n' ' ')$(command -v nvcc > /dev/null && nvcc --version | tail -n 1)"
echo "$(nproc) cores, $(free -g | awk '/Mem:/ { print $2 }') GiB memory; $(. /etc/os-release 2> /dev/null && echo "$PRETTY_NAME"), glibc $(ldd --version | head -n 1 | awk '{ print $NF }')"
"$bin" --version || failed+=("the binary does not start")

if [ "$route" != cpu ]; then
  step "nvidia-smi"
  if ! command -v nvidia-smi > /dev/null; then
    echo "no nvidia-smi on this machine: no NVIDIA driver (the GPU steps below will fail; \
--cpu rehearses the script without a GPU)"
    failed+=("nvidia-smi (not installed: no NVIDIA driver)")
  elif nvidia-smi; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv
  else
    failed+=("nvidia-smi")
  fi
fi

if [ "$route" = wgpu ]; then
  step "Vulkan for wgpu"
  if ! ldconfig -p 2> /dev/null | grep -q 'libvulkan.so.1 '; then
    echo "no Vulkan loader on this machine: using the bundle's $bundle/lib (libvulkan.so.1, glvnd)"
    export LD_LIBRARY_PATH="$(pwd)/$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  icds=$(ls /usr/share/vulkan/icd.d/nvidia*.json /etc/vulkan/icd.d/nvidia*.json 2> /dev/null)
  # Containers given the driver by NVIDIA's toolkit may keep its files under /usr/local/nvidia.
  mounted=$(ls /usr/local/nvidia/share/vulkan/icd.d/nvidia*.json 2> /dev/null | head -n 1)
  if [ -n "$icds" ]; then
    echo "NVIDIA Vulkan ICD: $icds"
  elif [ -n "$mounted" ]; then
    export VK_DRIVER_FILES="$mounted" VK_ICD_FILENAMES="$mounted"
    echo "NVIDIA Vulkan ICD (driver mount): $mounted"
  elif ldconfig -p 2> /dev/null | grep -q 'libGLX_nvidia.so.0 '; then
    echo '{"file_format_version": "1.0.1", "ICD": {"library_path": "libGLX_nvidia.so.0", "api_version": "1.3"}}' \
      > "$work/nvidia_icd.json"
    export VK_ICD_FILENAMES="$work/nvidia_icd.json"
    echo "no NVIDIA ICD file: wrote $VK_ICD_FILENAMES naming the driver's libGLX_nvidia.so.0"
  else
    echo "the driver's Vulkan library (libGLX_nvidia.so.0) is not installed: wgpu will find no NVIDIA adapter"
  fi
  # Headless machines: the driver's EGL library as the ICD first. On the H200 of 2026-11-28
  # the loader found libGLX_nvidia.so.0 but "Could not get 'vkCreateInstance' via
  # 'vk_icdGetInstanceProcAddr'" (NVIDIA/nvidia-container-toolkit#191, #1952: no X server),
  # and libEGL_nvidia.so.0 worked. The check retries with the other ICD if this one fails.
  if ldconfig -p 2> /dev/null | grep -q 'libEGL_nvidia.so.0 '; then
    echo '{"file_format_version": "1.0.1", "ICD": {"library_path": "libEGL_nvidia.so.0", "api_version": "1.3"}}' \
      > "$work/nvidia_egl_icd.json"
    other_icd="${VK_ICD_FILENAMES:-}"
    export VK_DRIVER_FILES="$work/nvidia_egl_icd.json" VK_ICD_FILENAMES="$work/nvidia_egl_icd.json"
    echo "Vulkan ICD: the driver's libEGL_nvidia.so.0 ($VK_ICD_FILENAMES; the other one is the second try)"
    egl_first=1
  fi
  # What this machine has:
  echo "NVIDIA_DRIVER_CAPABILITIES=${NVIDIA_DRIVER_CAPABILITIES:-(unset)}; device nodes: $(ls /dev/nvidia* 2> /dev/null | tr '\n' ' ')"
  echo "driver libraries for Vulkan: $(ldconfig -p 2> /dev/null | grep -oE '(libGLX_nvidia|libEGL_nvidia|libnvidia-(glcore|glvkspirv|gpucomp|tls|glsi|eglcore))\.so[.0-9]*' | sort -u | tr '\n' ' ')"
fi

wants() { case ",$steps," in *,"$1",*) return 0 ;; *) return 1 ;; esac; }

[ "$route" = wgpu ] && export VK_LOADER_DEBUG=${VK_LOADER_DEBUG:-error,warn}
if wants sweep; then
  step "atomzero gpu-check --device $route --conv-sweep (autotune log: $out/autotune.log)"
  # CubeCL reads cubecl.toml from the working directory (or a parent): the autotune logger
  # at its full level, to a file.
  mkdir -p "$work/tune"
  printf '[autotune.logger]\nlevel = "full"\nfile = "%s"\n' "$out/autotune.log" > "$work/tune/cubecl.toml"
  # Not in a subshell: run_step records a failure in this shell's `failed`.
  cd "$work/tune" && run_step 150 "conv sweep" "$bin" gpu-check --device "$route" --conv-sweep
  cd "$repo" || exit 1
  [ -f "$out/autotune.log" ] && echo "autotune log: $(wc -l < "$out/autotune.log") lines"
fi

if wants nopad; then
  step "ATOMZERO_CONV_PAD=0 atomzero gpu-check --device $route --config tiny (control: unpadded)"
  ATOMZERO_CONV_PAD=0 run_step 150 "gpu-check, unpadded" "$bin" gpu-check --device "$route" --config tiny
fi

if wants check && [ "$nets" = both ] && [ "$route" != wgpu ]; then
  # The two nets in two processes at once: each spends most of its time compiling and
  # autotuning kernels on the CPU, so together they take about as long as the default net
  # alone (on an H200, 2026-11-29: 133 s and 117 s, at once). The tiny net's process runs in
  # its own directory so that each keeps its own CubeCL autotune cache (target/environment
  # under a Cargo workspace, ~/.cache/cubecl elsewhere).
  step "atomzero gpu-check --device $route --config default, and --config tiny at the same time"
  mkdir -p "$work/tiny"
  (cd "$work/tiny" && timeout -k 10 "$check_seconds" "$bin" gpu-check --device "$route" --config tiny \
    > "$work/tiny.out" 2>&1; echo $? > "$work/tiny.status") &
  tiny_pid=$!
  run_step "$check_seconds" "gpu-check (default net)" "$bin" gpu-check --device "$route" --config default
  wait "$tiny_pid"
  echo
  cat "$work/tiny.out"
  tiny_status=$(cat "$work/tiny.status" 2> /dev/null || echo "?")
  if [ "$tiny_status" != 0 ]; then
    failed+=("gpu-check (tiny net) (exit $tiny_status$([ "$tiny_status" = 124 ] && echo ", over ${check_seconds} s"))")
  fi
elif wants check; then
  step "atomzero gpu-check --device $route --config $nets"
  if ! run_step "$check_seconds" "gpu-check" "$bin" gpu-check --device "$route" --config "$nets" &&
    [ -n "$egl_first" ]; then
    # A second try with the ICD the machine names (or the GLX one written above), in case
    # the EGL one was what failed.
    if [ -n "$other_icd" ]; then
      export VK_DRIVER_FILES="$other_icd" VK_ICD_FILENAMES="$other_icd"
    else
      unset VK_DRIVER_FILES VK_ICD_FILENAMES
    fi
    step "atomzero gpu-check --device wgpu --config $nets, the machine's own ICD (second try)"
    run_step "$check_seconds" "gpu-check, second ICD" "$bin" gpu-check --device "$route" --config "$nets"
  fi
fi

if ! wants bench; then
  :
elif [ "$route" = cpu ]; then
  step "atomzero bench net --device cpu --quick --config tiny --batches 256 (rehearsal)"
  run_step 300 "bench net" "$bin" bench net --device cpu --quick --config tiny --batches 256
else
  step "atomzero bench net --device $route --config $nets --batches $batches"
  run_step "$bench_seconds" "bench net" "$bin" bench net --device "$route" --config "$nets" \
    --batches "$batches"
fi

if wants selfplay; then
  sed -e "s/^device = .*/device = \"$route\"/" -e 's/^visits = .*/visits = 32/' \
    -e 's/^cheap_visits = .*/cheap_visits = 8/' -e 's/^games_per_worker = .*/games_per_worker = 16/' \
    -e 's/^max_plies = .*/max_plies = 120/' configs/default.toml > "$work/selfplay.toml"
  step "atomzero bench selfplay --games $selfplay_games (configs/default.toml's net, device $route, 32/8 visits, 16 games a worker)"
  run_step "$bench_seconds" "bench selfplay" "$bin" bench selfplay --config "$work/selfplay.toml" \
    --games "$selfplay_games" --batching both
fi

if wants run && [ "$route" != wgpu ] && [ "$run_minutes" != 0 ]; then
  # The run gets what is left of the budget (less 40 s: its shutdown and the summary), at
  # most --run-minutes.
  seconds=$(awk -v m="$run_minutes" -v left=$((budget - (SECONDS - start) - 40)) \
    'BEGIN { s = m * 60; if (left < s) s = left; printf "%d", s < 0 ? 0 : s }')
  step "atomzero run --config configs/default.toml (device $route) for $seconds s"
  # eval_games = 0: a fresh run first plays its random net against the baselines (300 games
  # that evaluate one position at a time), which would fill the minutes meant for self-play.
  sed -e "s/^device = .*/device = \"$route\"/" -e "s/^eval_games = .*/eval_games = 0/" \
    configs/default.toml > "$work/default.toml"
  grep -q '^eval_games = 0$' "$work/default.toml" || failed+=("configs/default.toml has no eval_games line")
  if [ -n "$run_games" ]; then
    per_worker=$(((run_games + $(nproc) - 1) / $(nproc)))
    sed -i -e "s/^games_per_generation = .*/games_per_generation = $run_games/" \
      -e "s/^games_per_worker = .*/games_per_worker = $per_worker/" \
      -e "s/^games_per_shard = .*/games_per_shard = $run_games/" \
      -e "s/^gate_games = .*/gate_games = 0/" "$work/default.toml"
    echo "a generation of $run_games games ($per_worker per worker), no gate (every candidate promoted)"
  fi
  if [ -n "$run_visits" ]; then
    cheap=$(((run_visits + 3) / 4))
    sed -i -e "s/^visits = .*/visits = $run_visits/" -e "s/^cheap_visits = .*/cheap_visits = $cheap/" \
      "$work/default.toml"
    echo "searches of $run_visits visits ($cheap cheap)"
  fi
  if [ -n "$run_steps" ]; then
    sed -i "s/^steps_per_generation = .*/steps_per_generation = $run_steps/" "$work/default.toml"
    echo "$run_steps training steps a generation"
  fi
  if [ "$route" = cuda ] && command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader,nounits \
      -lms 1000 > "$work/smi.csv" &
    sampler=$!
  else
    : > "$work/smi.csv"
  fi
  # SIGINT is Ctrl-C: the run saves what is finished and exits 130.
  timeout -s INT -k 30 "$seconds" "$bin" run --config "$work/default.toml" --dir "$work/run" \
    > "$work/run.out" 2>&1
  status=$?
  if [ -n "$sampler" ]; then
    kill "$sampler" 2> /dev/null
    wait "$sampler" 2> /dev/null
    sampler=""
  fi
  cat "$work/run.out"
  case "$status" in
    0 | 130 | 124) ;;
    *) failed+=("run (exit $status)") ;;
  esac
  echo
  echo "-- the run in figures"
  grep -E 'positions/s' "$work/run.out" | tail -n 1 | sed 's/^/self-play (last progress line): /'
  grep -E 'samples/s' "$work/run.out" | tail -n 1 | sed 's/^/training (last line): /' ||
    echo "training: not reached within $seconds s (a generation is $(awk -F' = ' '/^games_per_generation/ { print $2 }' "$work/default.toml") games); see bench net's train batch 512"
  awk -F', *' '$2 ~ /^[0-9]+$/ { n++; sum += $2; if ($2 > 0) busy++; mem = $3 > mem ? $3 : mem }
    END { if (n) printf "GPU busy share: mean utilization.gpu %.1f%% over %d samples (1/s); a kernel running in %.1f%% of them; peak memory %d MiB\n", sum / n, n, 100 * busy / n, mem;
          else print "GPU busy share: no nvidia-smi samples" }' "$work/smi.csv"
fi

step "done in $((SECONDS - start)) s"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "all steps passed (log: $log)"
