/* gen.c: reproducible input distributions (see gen.h). */
#include "gen.h"

#include <math.h>
#include <string.h>

#include "../../src/common/keys.h"

static const char* const names_[GEN_DIST_COUNT] = {"uniform", "normal", "radix", "cd",
                                                   "equal",   "asc",    "desc",  "zipf"};

const char* gen_dist_name(gen_dist d) { return (unsigned)d < GEN_DIST_COUNT ? names_[d] : "?"; }

int gen_dist_parse(const char* s, gen_dist* d) {
  for (int i = 0; i < GEN_DIST_COUNT; ++i)
    if (strcmp(s, names_[i]) == 0) { *d = (gen_dist)i; return 0; }
  if (strcmp(s, "radix-adversarial") == 0) { *d = GEN_RADIX_ADVERSARIAL; return 0; }
  if (strcmp(s, "all-equal") == 0) { *d = GEN_ALL_EQUAL; return 0; }
  return -1;
}

/* splitmix64 of (seed, i, stream): independent streams of 64 random bits per element. */
static uint64_t mix(uint64_t seed, uint64_t i, uint64_t stream) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i * 0xD1B54A32D192ED03ull + stream * 0x8CB92BA72F3D8DD7ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double unit(uint64_t bits) { return (double)(bits >> 11) * (1.0 / 9007199254740992.0); } /* [0,1) */

uint16_t gen_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
  u += 0x7FFFu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

float gen_bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

uint16_t gen_f32_to_f16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return (uint16_t)(sign | 0x7E00u | ((a >> 13) & 0x1FFu));
  if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u); /* rounds to inf */
  if (a < 0x38800000u) {                                     /* subnormal or zero in f16 */
    if (a < 0x33000000u) return (uint16_t)sign;
    uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
    int shift = 126 - (int)(a >> 23); /* mantissa bits that fall below the f16 subnormal's last place */
    uint32_t r = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return (uint16_t)(sign | r);
  }
  uint32_t r = ((a - 0x38000000u) >> 13);
  uint32_t rem = a & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return (uint16_t)(sign | r);
}

float gen_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu, u;
  if (e == 0x1F) u = sign | 0x7F800000u | (m << 13);
  else if (e == 0) {
    if (m == 0) u = sign;
    else { /* normalise the subnormal */
      e = 113;
      while (!(m & 0x400u)) { m <<= 1; --e; }
      u = sign | (e << 23) | ((m & 0x3FFu) << 13);
    }
  } else u = sign | ((e + 112) << 23) | (m << 13);
  float f;
  memcpy(&f, &u, 4);
  return f;
}

double gen_to_double(const void* base, int64_t i, topk_dtype dt) {
  switch (dt) {
    case TOPK_F32: return ((const float*)base)[i];
    case TOPK_F16: return gen_f16_to_f32(((const uint16_t*)base)[i]);
    case TOPK_BF16: return gen_bf16_to_f32(((const uint16_t*)base)[i]);
    case TOPK_F64: return ((const double*)base)[i];
    case TOPK_I32: return ((const int32_t*)base)[i];
    case TOPK_U32: return ((const uint32_t*)base)[i];
    case TOPK_I64: return (double)((const int64_t*)base)[i];
    case TOPK_U64: return (double)((const uint64_t*)base)[i];
  }
  return 0;
}

static int is_float(topk_dtype dt) {
  return dt == TOPK_F32 || dt == TOPK_F16 || dt == TOPK_BF16 || dt == TOPK_F64;
}

/* Stores a double as dtype dt (integers: rounded and clamped). */
static void store_double(void* out, int64_t i, topk_dtype dt, double v) {
  switch (dt) {
    case TOPK_F32: ((float*)out)[i] = (float)v; return;
    case TOPK_F16: ((uint16_t*)out)[i] = gen_f32_to_f16((float)v); return;
    case TOPK_BF16: ((uint16_t*)out)[i] = gen_f32_to_bf16((float)v); return;
    case TOPK_F64: ((double*)out)[i] = v; return;
    case TOPK_I32: ((int32_t*)out)[i] = v >= 2147483647.0 ? INT32_MAX : v <= -2147483648.0 ? INT32_MIN : (int32_t)llround(v); return;
    case TOPK_U32: ((uint32_t*)out)[i] = v >= 4294967295.0 ? UINT32_MAX : v <= 0 ? 0u : (uint32_t)llround(v); return;
    case TOPK_I64: ((int64_t*)out)[i] = v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)llround(v); return;
    case TOPK_U64: ((uint64_t*)out)[i] = v >= 1.8e19 ? UINT64_MAX : v <= 0 ? 0u : (uint64_t)llround(v); return;
  }
}

/* Raw bits whose order-preserving key is `key` (the inverse of topk_key_of_bits, NaN aside). */
static uint64_t bits_of_key(uint64_t key, topk_dtype dt) {
  int w = topk_key_bits(dt);
  uint64_t sign = 1ull << (w - 1), mask = topk_key_mask(dt);
  if (dt == TOPK_I32 || dt == TOPK_I64) return key ^ sign;
  if (dt == TOPK_U32 || dt == TOPK_U64) return key;
  return (key & sign) ? (key ^ sign) : (~key & mask);
}

int gen_fill(void* out, topk_dtype dt, int64_t count, const gen_opts* o) {
  if ((unsigned)dt >= TOPK_DTYPE_COUNT || (unsigned)o->dist >= GEN_DIST_COUNT) return -1;
  const int w = topk_key_bits(dt);
  const int fl = is_float(dt);
  const uint64_t seed = o->seed;
  int eq = o->equal_bits > 0 ? o->equal_bits : 20;
  if (eq > w - 4) eq = w - 4;
  /* Radix-adversarial prefix: the key of a moderate value (1.0 for floats, 1 << (w-8) for ints). */
  uint64_t base_bits = 0;
  if (o->dist == GEN_RADIX_ADVERSARIAL) {
    void* tmp = &base_bits;
    store_double(tmp, 0, dt, fl ? 1.0 : (double)(1ull << (w - 8)));
  }
  const uint64_t base_key = topk_key_of_bits(base_bits, dt);
  const uint64_t low_mask = (w - eq) >= 64 ? ~0ull : ((1ull << (w - eq)) - 1ull);
  const double int_scale = ldexp(1.0, w / 4);

  for (int64_t i = 0; i < count; ++i) {
    uint64_t r0 = mix(seed, (uint64_t)i, 0);
    int64_t pos = o->row_length > 0 ? i % o->row_length : i;
    int64_t len = o->row_length > 0 ? o->row_length : count;
    const double step = fl && o->step_length > 0 ? 16.0 * (double)(pos / o->step_length) : 0.0;
    switch (o->dist) {
      case GEN_UNIFORM:
        if (fl) store_double(out, i, dt, unit(r0) + step);
        else topk_store_bits(out, i, dt, r0 & topk_key_mask(dt));
        break;
      case GEN_NORMAL: {
        double u1 = unit(r0) + 0x1p-60, u2 = unit(mix(seed, (uint64_t)i, 1));
        double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        store_double(out, i, dt, fl ? z + step : z * int_scale);
        break;
      }
      case GEN_RADIX_ADVERSARIAL:
        topk_store_bits(out, i, dt, bits_of_key((base_key & ~low_mask) | (r0 & low_mask), dt));
        break;
      case GEN_CD: {
        /* 15/16 of the elements in one narrow bucket just above 0.5 (ints: 2^(w-2)); the rest spread. */
        double u = unit(mix(seed, (uint64_t)i, 1));
        double v = (r0 & 15u) ? 0.5 + u * 0x1p-20 : u;
        store_double(out, i, dt, fl ? v : v * ldexp(1.0, w - 1));
        break;
      }
      case GEN_ALL_EQUAL: store_double(out, i, dt, 1.0); break;
      case GEN_SORTED_ASC:
      case GEN_SORTED_DESC: {
        int64_t p = o->dist == GEN_SORTED_ASC ? pos : len - 1 - pos;
        store_double(out, i, dt, fl ? (double)p / (double)len : (double)p);
        break;
      }
      case GEN_ZIPF: {
        double u = unit(r0) + 0x1p-60;
        store_double(out, i, dt, floor(pow(u, -1.0 / 1.1)));
        break;
      }
      default: return -1;
    }
    if (fl && (o->nan_fraction > 0 || o->inf_fraction > 0 || o->zero_fraction > 0)) {
      uint64_t r2 = mix(seed, (uint64_t)i, 2);
      double u = unit(r2);
      int neg = (int)(r2 & 1u);
      if (u < o->nan_fraction) {
        uint64_t payload = (r2 >> 8) & 0xFFu;
        double nan_v = neg ? -NAN : NAN;
        store_double(out, i, dt, nan_v);
        if (dt == TOPK_F32) ((uint32_t*)out)[i] |= (uint32_t)payload; /* varied payloads */
      } else if (u < o->nan_fraction + o->inf_fraction) {
        store_double(out, i, dt, neg ? -INFINITY : INFINITY);
      } else if (u < o->nan_fraction + o->inf_fraction + o->zero_fraction) {
        store_double(out, i, dt, neg ? -0.0 : 0.0);
      }
    }
  }
  return 0;
}
