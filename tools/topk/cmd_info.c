/*
 * cmd_info.c: `topk info`, what this build of topk can do here: the version,
 * the build options, the algorithms built for each backend, and the CUDA
 * devices (with --bandwidth, the measured read bandwidth that bench reports
 * its roofline against). Without a GPU it says so and succeeds.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "options.h"
#include "topk.h"

static const opt_def info_opts_[] = {
    {"bandwidth", 'b', OPT_FLAG, NULL, "measure the read bandwidth of the current device (takes ~1 s)"},
    {NULL, 0, OPT_FLAG, NULL, NULL}};

static const opt_command info_cmd_ = {
    "info", "[--bandwidth]",
    "Prints the version, the build options, the algorithms built for each backend,\n"
    "and the CUDA devices; 'no CUDA device' (and exit code 0) where there is none.",
    info_opts_, NULL};

/* Names of the algorithms a backend has built: those that accept a small problem. */
static void print_algorithms(topk_backend backend, const char* label) {
  printf("algorithms (%s):", label);
  for (int a = 1; a < TOPK_ALGO_COUNT; ++a) {
    topk_problem p = {.batch = 1, .n = 4096, .k = 16, .algo = (topk_algo)a, .backend = backend};
    topk_plan* plan = NULL;
    if (topk_plan_create(&plan, &p) == TOPK_SUCCESS) printf(" %s", topk_algo_name((topk_algo)a));
    topk_plan_destroy(plan);
  }
  printf("\n");
}

int cmd_info(int argc, char** argv) {
  opt_values v;
  int rc = opt_parse(&info_cmd_, argc, argv, &v);
  if (rc != 0) return rc;
  if (v.help) return opt_help(&info_cmd_, stdout);
  if (v.npos > 0) return opt_usage_error(&v, "unexpected argument '%s'", v.pos[0]);

  printf("topk %s\n", topk_version_string());
  printf("build: %s\n", topk_build_info());
  print_algorithms(TOPK_BACKEND_CPU, "cpu");
  int count = topk_device_count();
  if (count <= 0 || !topk_cuda_available()) {
    printf("no CUDA device\n");
    return 0;
  }
  print_algorithms(TOPK_BACKEND_CUDA, "cuda");
  for (int d = 0; d < count; ++d) {
    topk_device_props props;
    topk_status s = topk_device_get_props(d, &props);
    if (s != TOPK_SUCCESS) {
      fprintf(stderr, "topk info: device %d: %s (%s)\n", d, topk_error_detail(), topk_status_name(s));
      return (int)s;
    }
    printf("device %d: %s, compute capability %d.%d, %d SMs, %.1f GiB, L2 %.1f MiB, "
           "shared memory per block %lld KiB\n",
           props.ordinal, props.name, props.cc_major, props.cc_minor, props.sm_count,
           (double)props.global_mem_bytes / (1 << 30), (double)props.l2_bytes / (1 << 20),
           (long long)(props.smem_per_block_optin / 1024));
  }
  if (opt_given(&v, "bandwidth")) {
    double bps = 0;
    topk_status s = topk_measure_read_bandwidth(&bps);
    if (s != TOPK_SUCCESS) {
      fprintf(stderr, "topk info: cannot measure the bandwidth: %s (%s)\n", topk_error_detail(), topk_status_name(s));
      return (int)s;
    }
    printf("read bandwidth (current device): %.1f GB/s\n", bps / 1e9);
  }
  return 0;
}
