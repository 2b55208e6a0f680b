/*
 * latency.cu: per-call latency of topk_select for LLM-sampling shapes, as a
 * markdown table (CUDA builds only; target latency).
 *
 *   latency [--algo NAME|auto] [--sorted] [--csv FILE] [--quick] [--k K]
 *   latency --moe [--algo NAME|auto] [--sorted] [--csv FILE]
 *
 * Shapes: batch 1, 2, 4, 8 x vocabulary n 32000, 128256, 151936, 262144 x k 1,
 * 50, 1024; f32 and bf16; largest, int64 indices, unsorted (--sorted: sorted).
 * --quick: batch 1, 8 x n 32000, 262144 x k 1, 50, f32 only. --algo: the
 * algorithm asked for (default auto); a shape it does not support is printed
 * as "unsupported". --csv FILE: the same rows as CSV. --k K: only the shapes of that k (one of the
 * grid's, not with --moe; to compare builds on the shapes a change can reach in a shorter run).
 *
 * At these sizes the selection itself is a few microseconds of memory traffic,
 * so fixed costs (host validation and choosing, launches, tails) dominate; the
 * target is <= 10 us per call. Per shape, in microseconds:
 *   events_us  CUDA events around 200 back-to-back calls on one stream, / 200
 *              (after 20 warm-up calls): throughput when the host keeps the
 *              GPU fed; bounded below by host_us when the host is the limit.
 *   single_us  median over 50 trials of an event pair around ONE call on an
 *              idle stream: the GPU time of a call, launch gaps included.
 *   host_us    median wall time (CLOCK_MONOTONIC) spent inside topk_select in
 *              those 50 trials: the enqueue cost a sampler pays per step.
 *   graph_us   ONE call captured into a CUDA graph, 200 replays between events,
 *              / 200 (after 20 warm-up replays): the GPU cost without the host,
 *              as in a captured decode step. "capture-failed:STATUS" when the
 *              call cannot be captured.
 *   floor_us   batch * n * element size / read bandwidth (measured once by
 *              topk_measure_read_bandwidth): the DRAM read floor. The inputs
 *              (<= 8 MiB) stay in L2 between calls, like logits just written
 *              by the LM head, so a time can be below it.
 * `chosen` is the algorithm the call runs (for auto: topk_plan_algo of a plan
 * made for the same problem, which is the choice topk_select makes).
 *
 * --moe: the moe shapes instead (65536 rows x 64, 128, 256, k 1, 2, 4, 8, f32 and bf16), each
 * call on the next of NB inputs (NB x the input >= 3 x the L2 cache, as `topk bench` rotates
 * them), so every call reads its input from DRAM. Per shape: events_us (as above, over the
 * rotating inputs: what `topk bench` measures), graph_us (NB calls, one per input, captured
 * into one graph and replayed: the GPU's time per call without the host), host_us (as above)
 * and both times as % of the roofline (input read once + outputs written, at the measured read
 * bandwidth). Where events_us is well above graph_us, the host's enqueue, not the GPU, bounds
 * back-to-back calls.
 *
 * Input: N(0,1) values from tools/common/gen.h. Calls use TOPK_BACKEND_CUDA
 * (as the Python bindings do), a caller-provided workspace allocated outside
 * the timing, and a non-blocking stream. One call's first row of indices per
 * shape (and one graph replay's) is checked to lie in [0, n); correctness is
 * tested elsewhere. Exit status: 0; 77 without a usable CUDA device; 64 usage;
 * 74 CSV file; 1 on a failing call or invalid indices.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "topk.h"
extern "C" { /* C headers without their own C++ guards */
#include "gen.h"
#include "timer.h"
}

#define WARM 20
#define CALLS 200
#define TRIALS 50
#define TARGET_US 10.0

/* A failing CUDA runtime call ends the run: later numbers would be meaningless. */
#define CUDA_TRY(call)                                                                         \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "latency: %s: %s\n", #call, cudaGetErrorString(e_));                     \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

#define TOPK_TRY(call)                                                                         \
  do {                                                                                         \
    topk_status s_ = (call);                                                                   \
    if (s_ != TOPK_SUCCESS) {                                                                  \
      fprintf(stderr, "latency: %s: %s (%s)\n", #call, topk_status_name(s_), topk_error_detail()); \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

/* Everything one shape's measurements need; buffers are sized for the largest shape. */
typedef struct bench {
  topk_problem p;
  const void* in;
  void* values;
  int64_t* indices;
  void* ws;
  size_t ws_bytes;
  cudaStream_t stream;
  cudaEvent_t e0, e1;
} bench;

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* v, int count) {
  qsort(v, (size_t)count, sizeof v[0], cmp_double);
  return count % 2 ? v[count / 2] : 0.5 * (v[count / 2 - 1] + v[count / 2]);
}

static void call(const bench* b) {
  TOPK_TRY(topk_select(&b->p, b->in, b->values, b->indices, b->ws, b->ws_bytes, b->stream));
}

/* Microseconds between the two events, waiting for the second. */
static double elapsed_us(const bench* b) {
  float ms = 0;
  CUDA_TRY(cudaEventSynchronize(b->e1));
  CUDA_TRY(cudaEventElapsedTime(&ms, b->e0, b->e1));
  return 1e3 * (double)ms;
}

/* Poisons the indices (all bits set: -1), lets run() write them, checks row 0 lies in [0, n). */
static void check_first_row(const bench* b, void (*run)(const bench*, const void*), const void* arg,
                            const char* what) {
  const int64_t k = b->p.k;
  int64_t* host = (int64_t*)malloc((size_t)k * sizeof(int64_t));
  if (!host) {
    fprintf(stderr, "latency: out of host memory\n");
    exit(1);
  }
  CUDA_TRY(cudaMemsetAsync(b->indices, 0xff, (size_t)(b->p.batch * k) * sizeof(int64_t), b->stream));
  run(b, arg);
  CUDA_TRY(cudaStreamSynchronize(b->stream));
  CUDA_TRY(cudaMemcpy(host, b->indices, (size_t)k * sizeof(int64_t), cudaMemcpyDeviceToHost));
  for (int64_t j = 0; j < k; ++j)
    if (host[j] < 0 || host[j] >= b->p.n) {
      fprintf(stderr, "latency: %s: %s batch=%lld n=%lld k=%lld: index %lld of row 0 is %lld, outside [0, n)\n",
              what, topk_dtype_name(b->p.dtype), (long long)b->p.batch, (long long)b->p.n, (long long)k,
              (long long)j, (long long)host[j]);
      exit(1);
    }
  free(host);
}

static void run_select(const bench* b, const void* arg) {
  (void)arg;
  call(b);
}

static void run_graph(const bench* b, const void* arg) {
  CUDA_TRY(cudaGraphLaunch(*(const cudaGraphExec_t*)arg, b->stream));
}

/* events_us: the average of CALLS back-to-back calls, so launch gaps and host cost show where they limit. */
static double events_us(const bench* b) {
  for (int i = 0; i < WARM; ++i) call(b);
  CUDA_TRY(cudaEventRecord(b->e0, b->stream));
  for (int i = 0; i < CALLS; ++i) call(b);
  CUDA_TRY(cudaEventRecord(b->e1, b->stream));
  return elapsed_us(b) / CALLS;
}

/* single_us and host_us from the same trials: the stream is idle at each call, so the call never waits for queue space. */
static void single_and_host_us(const bench* b, double* single, double* host) {
  double dev[TRIALS], wall[TRIALS];
  for (int t = 0; t < TRIALS; ++t) {
    CUDA_TRY(cudaStreamSynchronize(b->stream));
    CUDA_TRY(cudaEventRecord(b->e0, b->stream));
    const double t0 = timer_now_seconds();
    call(b);
    const double t1 = timer_now_seconds();
    CUDA_TRY(cudaEventRecord(b->e1, b->stream));
    dev[t] = elapsed_us(b);
    wall[t] = 1e6 * (t1 - t0);
  }
  *single = median(dev, TRIALS);
  *host = median(wall, TRIALS);
}

/*
 * graph_us: one call captured, replayed CALLS times. Returns < 0 and the reason in why[] if the
 * call cannot be captured; the stream is then out of capture mode and usable again.
 */
static double graph_us(const bench* b, char* why, size_t why_size) {
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  /* ThreadLocal: an unsafe call (cudaMalloc, a synchronisation) by this thread fails the capture. */
  CUDA_TRY(cudaStreamBeginCapture(b->stream, cudaStreamCaptureModeThreadLocal));
  const topk_status s = topk_select(&b->p, b->in, b->values, b->indices, b->ws, b->ws_bytes, b->stream);
  char detail[512] = ""; /* copied: the library's detail lasts only until its next call */
  if (s != TOPK_SUCCESS) snprintf(detail, sizeof detail, "%s", topk_error_detail());
  /* Always end the capture, even after a failed call, so that the stream leaves capture mode. */
  const cudaError_t e = cudaStreamEndCapture(b->stream, &graph);
  cudaError_t ie = cudaSuccess;
  if (s == TOPK_SUCCESS && e == cudaSuccess && graph) ie = cudaGraphInstantiate(&exec, graph, 0);
  if (s != TOPK_SUCCESS || e != cudaSuccess || !graph || ie != cudaSuccess) {
    const char* name = s != TOPK_SUCCESS ? topk_status_name(s)
                       : e != cudaSuccess ? cudaGetErrorName(e)
                       : !graph           ? "no-graph"
                                          : cudaGetErrorName(ie);
    snprintf(why, why_size, "capture-failed:%s", name);
    fprintf(stderr, "latency: capture of %s batch=%lld n=%lld k=%lld failed: %s %s\n", topk_dtype_name(b->p.dtype),
            (long long)b->p.batch, (long long)b->p.n, (long long)b->p.k, name, detail);
    if (graph) CUDA_TRY(cudaGraphDestroy(graph));
    (void)cudaGetLastError(); /* capture errors are not sticky: clear them so later checks see only new ones */
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    CUDA_TRY(cudaStreamIsCapturing(b->stream, &cs));
    if (cs != cudaStreamCaptureStatusNone) {
      fprintf(stderr, "latency: the stream is still capturing after cudaStreamEndCapture\n");
      exit(1);
    }
    CUDA_TRY(cudaStreamSynchronize(b->stream)); /* proves the stream usable before the next shape */
    return -1.0;
  }
  CUDA_TRY(cudaGraphUpload(exec, b->stream)); /* the first launch's upload is setup, not replay cost */
  for (int i = 0; i < WARM; ++i) CUDA_TRY(cudaGraphLaunch(exec, b->stream));
  CUDA_TRY(cudaEventRecord(b->e0, b->stream));
  for (int i = 0; i < CALLS; ++i) CUDA_TRY(cudaGraphLaunch(exec, b->stream));
  CUDA_TRY(cudaEventRecord(b->e1, b->stream));
  const double us = elapsed_us(b) / CALLS;
  /* A graph that replays garbage would make its time meaningless: check one replay's indices too. */
  check_first_row(b, run_graph, &exec, "graph replay");
  CUDA_TRY(cudaGraphExecDestroy(exec));
  CUDA_TRY(cudaGraphDestroy(graph));
  return us;
}

/* count N(0,1) values of dt (seed 12345) into dev, through the host buffer host. */
static void fill_normal(void* dev, void* host, topk_dtype dt, int64_t count) {
  gen_opts g;
  memset(&g, 0, sizeof g);
  g.dist = GEN_NORMAL;
  g.seed = 12345u;
  if (gen_fill(host, dt, count, &g) != 0) {
    fprintf(stderr, "latency: gen_fill failed\n");
    exit(1);
  }
  CUDA_TRY(cudaMemcpy(dev, host, (size_t)count * topk_dtype_size(dt), cudaMemcpyHostToDevice));
}

/* A bench's outputs (for `rows` rows of up to `k` results), stream and events; bench_close frees them. */
static void bench_open(bench* b, int64_t rows, int64_t k) {
  memset(b, 0, sizeof *b);
  CUDA_TRY(cudaMalloc(&b->values, (size_t)(rows * k) * sizeof(float))); /* f32 is the widest dtype here */
  CUDA_TRY(cudaMalloc((void**)&b->indices, (size_t)(rows * k) * sizeof(int64_t)));
  CUDA_TRY(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking));
  CUDA_TRY(cudaEventCreate(&b->e0));
  CUDA_TRY(cudaEventCreate(&b->e1));
}

static void bench_close(bench* b) {
  CUDA_TRY(cudaEventDestroy(b->e0));
  CUDA_TRY(cudaEventDestroy(b->e1));
  CUDA_TRY(cudaStreamDestroy(b->stream));
  CUDA_TRY(cudaFree(b->values));
  CUDA_TRY(cudaFree(b->indices));
}

/* What a call of b->p runs (a plan makes topk_select's choice; only a plan can say what it is),
 * with its workspace allocated and one call's first row of indices checked. */
static const char* setup_shape(bench* b, size_t ws_bytes) {
  topk_plan* plan = NULL;
  TOPK_TRY(topk_plan_create(&plan, &b->p));
  const char* chosen = topk_algo_name(topk_plan_algo(plan));
  topk_plan_destroy(plan);
  b->ws = NULL;
  b->ws_bytes = ws_bytes;
  if (ws_bytes) CUDA_TRY(cudaMalloc(&b->ws, ws_bytes));
  check_first_row(b, run_select, NULL, "topk_select");
  return chosen;
}

/* events_us over rotating inputs: call i reads ins[i % nb]. */
static double events_rot_us(bench* b, const void* const* ins, int nb) {
  for (int i = 0; i < WARM; ++i) {
    b->in = ins[i % nb];
    call(b);
  }
  CUDA_TRY(cudaEventRecord(b->e0, b->stream));
  for (int i = 0; i < CALLS; ++i) {
    b->in = ins[i % nb];
    call(b);
  }
  CUDA_TRY(cudaEventRecord(b->e1, b->stream));
  b->in = ins[0];
  return elapsed_us(b) / CALLS;
}

/* graph_us over rotating inputs: nb calls, one per input, captured into one graph; replayed
 * until >= CALLS calls have run. Returns < 0 where the calls cannot be captured. */
static double graph_rot_us(bench* b, const void* const* ins, int nb) {
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  CUDA_TRY(cudaStreamBeginCapture(b->stream, cudaStreamCaptureModeThreadLocal));
  topk_status s = TOPK_SUCCESS;
  for (int i = 0; i < nb && s == TOPK_SUCCESS; ++i)
    s = topk_select(&b->p, ins[i], b->values, b->indices, b->ws, b->ws_bytes, b->stream);
  const cudaError_t e = cudaStreamEndCapture(b->stream, &graph);
  if (s != TOPK_SUCCESS || e != cudaSuccess || !graph || cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) {
    fprintf(stderr, "latency: capture of %d calls failed (%s)\n", nb, s != TOPK_SUCCESS ? topk_status_name(s) : "cuda");
    if (graph) CUDA_TRY(cudaGraphDestroy(graph));
    (void)cudaGetLastError();
    CUDA_TRY(cudaStreamSynchronize(b->stream));
    return -1.0;
  }
  const int replays = (CALLS + nb - 1) / nb;
  CUDA_TRY(cudaGraphUpload(exec, b->stream));
  for (int i = 0; i < 3; ++i) CUDA_TRY(cudaGraphLaunch(exec, b->stream));
  CUDA_TRY(cudaEventRecord(b->e0, b->stream));
  for (int i = 0; i < replays; ++i) CUDA_TRY(cudaGraphLaunch(exec, b->stream));
  CUDA_TRY(cudaEventRecord(b->e1, b->stream));
  const double us = elapsed_us(b) / ((double)replays * nb);
  /* the last call of the last replay read ins[nb - 1]: its row 0 must hold valid indices */
  b->in = ins[nb - 1];
  check_first_row(b, run_graph, &exec, "graph replay");
  b->in = ins[0];
  CUDA_TRY(cudaGraphExecDestroy(exec));
  CUDA_TRY(cudaGraphDestroy(graph));
  return us;
}

/* --moe: see the header. Returns the process exit status. */
static int moe_mode(topk_algo algo, int sorted, FILE* csv, const char* dev_name, double bw) {
  static const int64_t ns[] = {64, 128, 256}, ks[] = {1, 2, 4, 8};
  static const topk_dtype dtypes[] = {TOPK_F32, TOPK_BF16};
  const int64_t batch = 65536;
  int l2 = 0;
  CUDA_TRY(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  const size_t slab_bytes = (size_t)3 * (size_t)(l2 > 0 ? l2 : 50 << 20) + (size_t)batch * 256 * 4;
  bench b;
  bench_open(&b, batch, 8);
  void* slab = NULL;
  CUDA_TRY(cudaMalloc(&slab, slab_bytes));
  void* host = malloc(slab_bytes);
  if (!host) {
    fprintf(stderr, "latency: out of host memory\n");
    return 1;
  }
  printf("# topk_select on the moe shapes, inputs rotated out of L2 (%s, read bandwidth %.0f GB/s)\n\n", dev_name,
         bw / 1e9);
  printf("algo %s, largest, %s, int64 indices, N(0,1) input; us per call (%% of roofline)\n\n", topk_algo_name(algo),
         sorted ? "sorted" : "unsorted");
  printf("| dtype | rows x n | k | chosen | inputs | events_us | graph_us | host_us |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (int di = 0; di < 2; ++di) {
    const topk_dtype dt = dtypes[di];
    const size_t es = topk_dtype_size(dt);
    fill_normal(slab, host, dt, (int64_t)(slab_bytes / es));
    for (int ni = 0; ni < 3; ++ni)
      for (int ki = 0; ki < 4; ++ki) {
        memset(&b.p, 0, sizeof b.p);
        b.p.dtype = dt;
        b.p.batch = batch;
        b.p.n = ns[ni];
        b.p.k = ks[ki];
        b.p.flags = sorted ? TOPK_SORTED : 0;
        b.p.algo = algo;
        b.p.backend = TOPK_BACKEND_CUDA;
        const size_t in_bytes = (size_t)(batch * b.p.n) * es;
        int nb = (int)((3 * (size_t)l2 + in_bytes - 1) / in_bytes);
        if (nb < 2) nb = 2;
        if ((size_t)nb * in_bytes > slab_bytes) nb = (int)(slab_bytes / in_bytes);
        const void* ins[64];
        if (nb > 64) nb = 64;
        for (int i = 0; i < nb; ++i) ins[i] = (const char*)slab + (size_t)i * in_bytes;
        b.in = ins[0];
        size_t ws_bytes = 0;
        const topk_status s = topk_workspace_size(&b.p, &ws_bytes);
        if (s == TOPK_ERR_UNSUPPORTED) continue;
        TOPK_TRY(s);
        const char* chosen = setup_shape(&b, ws_bytes);
        const double ev = events_rot_us(&b, ins, nb);
        const double gr = graph_rot_us(&b, ins, nb);
        double single = 0, host_us = 0;
        single_and_host_us(&b, &single, &host_us);
        CUDA_TRY(cudaStreamSynchronize(b.stream));
        if (b.ws) CUDA_TRY(cudaFree(b.ws));
        const double roof_us = 1e6 * (double)(in_bytes + (size_t)(batch * b.p.k) * (es + 8)) / bw;
        printf("| %s | %lld x %lld | %lld | %s | %d | %.2f (%.1f %%) | %.2f (%.1f %%) | %.2f |\n", topk_dtype_name(dt),
               (long long)batch, (long long)b.p.n, (long long)b.p.k, chosen, nb, ev, 100 * roof_us / ev, gr,
               gr > 0 ? 100 * roof_us / gr : 0.0, host_us);
        if (csv)
          fprintf(csv, "%s,%s,%lld,%lld,%lld,%d,%s,%s,%.3f,%.3f,%.3f,%.3f,%.3f\n", dev_name, topk_dtype_name(dt),
                  (long long)batch, (long long)b.p.n, (long long)b.p.k, sorted, topk_algo_name(algo), chosen, ev,
                  single, host_us, gr, roof_us);
        fflush(stdout);
      }
  }
  bench_close(&b);
  CUDA_TRY(cudaFree(slab));
  free(host);
  return 0;
}

static int usage(void) {
  fprintf(stderr, "usage: latency [--moe] [--algo NAME|auto] [--sorted] [--csv FILE] [--quick] [--k K]\n");
  return 64;
}

int main(int argc, char** argv) {
  topk_algo algo = TOPK_ALGO_AUTO;
  int sorted = 0, quick = 0, moe = 0;
  long long only_k = 0; /* --k: 0 for every k of the set */
  const char* csv_path = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--algo") == 0 && i + 1 < argc) {
      if (topk_algo_parse(argv[++i], &algo) != 0) {
        fprintf(stderr, "latency: unknown algorithm '%s'\n", argv[i]);
        return usage();
      }
    } else if (strcmp(argv[i], "--sorted") == 0) {
      sorted = 1;
    } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
      csv_path = argv[++i];
    } else if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
    } else if (strcmp(argv[i], "--moe") == 0) {
      moe = 1;
    } else if (strcmp(argv[i], "--k") == 0 && i + 1 < argc) {
      char* end = NULL;
      only_k = strtoll(argv[++i], &end, 10);
      if (!end || *end || (only_k != 1 && only_k != 50 && only_k != 1024)) {
        fprintf(stderr, "latency: --k takes 1, 50 or 1024, not '%s'\n", argv[i]);
        return usage();
      }
    } else {
      return usage();
    }
  }
  if (only_k && (moe || (quick && only_k == 1024))) {
    fprintf(stderr, "latency: --k picks from the LLM grid's k (--quick: 1 and 50), not with --moe\n");
    return usage();
  }
  if (!topk_cuda_available()) {
    fprintf(stderr, "latency: no CUDA device\n");
    return 77;
  }

  static const int64_t batches_all[] = {1, 2, 4, 8}, batches_quick[] = {1, 8};
  static const int64_t ns_all[] = {32000, 128256, 151936, 262144}, ns_quick[] = {32000, 262144};
  static const int64_t ks_all[] = {1, 50, 1024}, ks_quick[] = {1, 50};
  static const topk_dtype dtypes[] = {TOPK_F32, TOPK_BF16};
  const int64_t* batches = quick ? batches_quick : batches_all;
  const int64_t* ns = quick ? ns_quick : ns_all;
  const int64_t* ks = quick ? ks_quick : ks_all;
  const int nb = quick ? 2 : 4, nn = quick ? 2 : 4, nk = quick ? 2 : 3, nd = quick ? 1 : 2;
  const int64_t max_batch = 8, max_n = 262144, max_k = 1024;

  FILE* csv = NULL;
  if (csv_path) {
    csv = fopen(csv_path, "w");
    if (!csv) {
      perror(csv_path);
      return 74;
    }
    fprintf(csv, "device,dtype,batch,n,k,sorted,algo,chosen,events_us,single_us,host_us,graph_us,%s\n",
            moe ? "roofline_us" : "floor_us");
  }

  topk_device_props props;
  TOPK_TRY(topk_device_get_props(0, &props));
  double bw = 0;
  TOPK_TRY(topk_measure_read_bandwidth(&bw));
  if (moe) {
    const int rc = moe_mode(algo, sorted, csv, props.name, bw);
    if (csv && fclose(csv) != 0) {
      perror(csv_path);
      return 74;
    }
    return rc;
  }

  bench b;
  bench_open(&b, max_batch, max_k);
  void* d_in = NULL;
  CUDA_TRY(cudaMalloc(&d_in, (size_t)(max_batch * max_n) * sizeof(float))); /* f32 is the widest dtype here */
  b.in = d_in;
  void* host = malloc((size_t)(max_batch * max_n) * sizeof(float));
  if (!host) {
    fprintf(stderr, "latency: out of host memory\n");
    return 1;
  }

  printf("# topk_select latency, LLM-sampling shapes (%s, read bandwidth %.0f GB/s)\n\n", props.name, bw / 1e9);
  printf("algo %s, largest, %s, int64 indices, N(0,1) input; microseconds per call; target <= %.0f us\n\n",
         topk_algo_name(algo), sorted ? "sorted" : "unsorted", TARGET_US);
  printf("| dtype | batch | n | k | algo | chosen | events_us | single_us | host_us | graph_us | floor_us |\n");
  printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  fflush(stdout);

  int rows = 0, over_events = 0, over_graph = 0;
  for (int di = 0; di < nd; ++di) {
    const topk_dtype dt = dtypes[di];
    const size_t es = topk_dtype_size(dt);
    /* Every shape reads a prefix of one buffer: the generator is counter-based, so each prefix is N(0,1). */
    fill_normal(d_in, host, dt, max_batch * max_n);

    for (int bi = 0; bi < nb; ++bi)
      for (int ni = 0; ni < nn; ++ni)
        for (int ki = 0; ki < nk; ++ki) {
          if (only_k && ks[ki] != only_k) continue;
          memset(&b.p, 0, sizeof b.p);
          b.p.dtype = dt;
          b.p.batch = batches[bi];
          b.p.n = ns[ni];
          b.p.k = ks[ki];
          b.p.flags = sorted ? TOPK_SORTED : 0;
          b.p.algo = algo;
          b.p.backend = TOPK_BACKEND_CUDA;
          const double floor_us = 1e6 * (double)(b.p.batch * b.p.n) * (double)es / bw;
          const char* dname = topk_dtype_name(dt);
          const char* aname = topk_algo_name(algo);

          size_t ws_bytes = 0;
          const topk_status s = topk_workspace_size(&b.p, &ws_bytes);
          if (s == TOPK_ERR_UNSUPPORTED) {
            printf("| %s | %lld | %lld | %lld | %s | - | unsupported | - | - | - | %.2f |\n", dname,
                   (long long)b.p.batch, (long long)b.p.n, (long long)b.p.k, aname, floor_us);
            if (csv)
              fprintf(csv, "%s,%s,%lld,%lld,%lld,%d,%s,,unsupported,,,,%.3f\n", props.name, dname,
                      (long long)b.p.batch, (long long)b.p.n, (long long)b.p.k, sorted, aname, floor_us);
            fflush(stdout);
            continue;
          }
          TOPK_TRY(s);
          const char* chosen = setup_shape(&b, ws_bytes);
          const double ev = events_us(&b);
          double single = 0, host_us = 0;
          single_and_host_us(&b, &single, &host_us);
          char graph_text[96];
          const double gr = graph_us(&b, graph_text, sizeof graph_text);
          if (gr >= 0) snprintf(graph_text, sizeof graph_text, "%.2f", gr);

          CUDA_TRY(cudaStreamSynchronize(b.stream)); /* nothing may still use the workspace */
          if (b.ws) CUDA_TRY(cudaFree(b.ws));

          ++rows;
          over_events += ev > TARGET_US;
          over_graph += !(gr >= 0 && gr <= TARGET_US);
          printf("| %s | %lld | %lld | %lld | %s | %s | %.2f | %.2f | %.2f | %s | %.2f |\n", dname,
                 (long long)b.p.batch, (long long)b.p.n, (long long)b.p.k, aname, chosen, ev, single, host_us,
                 graph_text, floor_us);
          if (csv)
            fprintf(csv, "%s,%s,%lld,%lld,%lld,%d,%s,%s,%.3f,%.3f,%.3f,%s,%.3f\n", props.name, dname,
                    (long long)b.p.batch, (long long)b.p.n, (long long)b.p.k, sorted, aname, chosen, ev, single,
                    host_us, graph_text, floor_us);
          fflush(stdout);
        }
  }
  printf("\n%d shapes measured; over %.0f us: %d by events_us, %d by graph_us (capture failures count as over)\n",
         rows, TARGET_US, over_events, over_graph);

  if (csv && fclose(csv) != 0) {
    perror(csv_path);
    return 74;
  }
  bench_close(&b);
  CUDA_TRY(cudaFree(d_in));
  free(host);
  return 0;
}
