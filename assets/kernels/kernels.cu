// gpuwizard's CUDA kernels for the executor (trainer/exec). Row-major
// float32 throughout; one thread per output element unless noted.
// Compiled to PTX by `make kernels` (nvcc -ptx); the PTX is committed and
// embedded, so neither the build nor CI needs nvcc. The same file also
// compiles as C on the CPU (trainer/exec/internal/cudaemu), where the tests
// run every kernel through the CUDA backend without a GPU: keep to the
// built-ins emu.h stands in for (and only __shfl_down_sync among the warp
// shuffles).
//
// Nothing here depends on a launch's arguments being fresh: a training
// step is captured once in a CUDA graph and replayed, so whatever changes
// per step (the optimiser's scalars) is read from device memory.

#define GRID_LOOP(i, n) \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (long long)blockDim.x * gridDim.x)

// Element counts arrive as int, so every index fits in 32 bits: index
// arithmetic is unsigned 32-bit, whose division the GPU does in a few
// instructions (64-bit division is a long software routine).
typedef unsigned int u32;

#ifdef __cplusplus
extern "C" {
#endif

__global__ void gw_fill(float *d, int n, float v) {
    GRID_LOOP(i, n) d[i] = v;
}

// SiLU's derivative at x times g: g·σ(x)·(1 + x·(1 − σ(x)))
__device__ __forceinline__ float gw_silu_grad(float x, float g) {
    float s = 1.f / (1.f + expf(-x));
    return g * s * (1.f + x * (1.f - s));
}

// op: 0 + 1 - 2 * 3 / 4 >= 5 > 6 <= 7 < 8 SiLU's gradient (a = x, b = g)
// (exec.BinOp order)
__device__ __forceinline__ float gw_binop(int op, float x, float y) {
    switch (op) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    case 3: return x / y;
    case 4: return x >= y ? 1.f : 0.f;
    case 5: return x > y ? 1.f : 0.f;
    case 6: return x <= y ? 1.f : 0.f;
    case 7: return x < y ? 1.f : 0.f;
    case 8: return gw_silu_grad(x, y);
    }
    return __int_as_float(0x7fc00000);
}

__global__ void gw_binary(int op, const float *a, const float *b, float *o, int n, int as, int bs) {
    GRID_LOOP(i, n) o[i] = gw_binop(op, a[as ? 0 : i], b[bs ? 0 : i]);
}

// op: 0 neg 1 exp 2 log 3 sqrt 4 square 5 abs 6 SiLU (x·σ(x)) (exec.UnOp order)
__global__ void gw_unary(int op, const float *a, float *o, int n) {
    GRID_LOOP(i, n) {
        float x = a[i];
        switch (op) {
        case 0: x = -x; break;
        case 1: x = expf(x); break;
        case 2: x = logf(x); break;
        case 3: x = sqrtf(x); break;
        case 4: x = x * x; break;
        case 5: x = fabsf(x); break;
        case 6: x = x / (1.f + expf(-x)); break;
        }
        o[i] = x;
    }
}

// The epilogue (exec.Epilogue) of the value v written at index i: a scale
// and a bias of channel (i / inner) % c, then a ReLU keeping its mask
// (gorgonia's x ⊙ (x ≥ 0)). Absent parts are null pointers.
__device__ __forceinline__ float gw_epi(float v, long long i, const float *scale, const float *bias, int inner,
                                        int c, float *mask) {
    if (scale || bias) {
        u32 ch = ((u32)i / (u32)inner) % (u32)c;
        if (scale) v *= scale[ch];
        if (bias) v += bias[ch];
    }
    if (mask) {
        float m = v >= 0.f ? 1.f : 0.f;
        mask[i] = m;
        v *= m;
    }
    return v;
}

// out = epilogue(in): a dense layer's bias and ReLU, a batch norm's scale,
// shift and ReLU, or a ReLU alone
__global__ void gw_apply(const float *in, float *out, int n, const float *scale, const float *bias, int inner, int c,
                         float *mask) {
    GRID_LOOP(i, n) out[i] = gw_epi(in[i], i, scale, bias, inner, c, mask);
}

// out (outer×rep×inner) from in (outer×1×inner)
__global__ void gw_repeat(const float *in, float *out, int outer, int rep, int inner) {
    long long n = (long long)outer * rep * inner;
    GRID_LOOP(i, n) {
        u32 u = (u32)i, o = u / ((u32)rep * (u32)inner), k = u % (u32)inner;
        out[i] = in[o * (u32)inner + k];
    }
}

// Reductions. The sum of a warp's 32 values with shuffles: lane 0 ends
// with the total.
__device__ __forceinline__ float gw_warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

// The sum of v over the block (up to 1024 threads, a multiple of 32),
// returned to every thread; sh holds 32 floats of shared memory.
__device__ float gw_block_sum(float v, float *sh) {
    int t = threadIdx.y * blockDim.x + threadIdx.x, warps = (blockDim.x * blockDim.y) >> 5;
    v = gw_warp_sum(v);
    if ((t & 31) == 0) sh[t >> 5] = v;
    __syncthreads();
    if (t < 32) {
        v = gw_warp_sum(t < warps ? sh[t] : 0.f);
        if (t == 0) sh[0] = v;
    }
    __syncthreads();
    v = sh[0];
    __syncthreads();
    return v;
}

// Rows of a gathered reduction, in parts: row r of nrows sums the A×B
// values in[a·strideA + r·strideC + b]; block (s, r) of 256 threads sums
// the s-th of splits equal chunks of them into part[s·nrows + r] (the
// output itself when splits is 1). Sum with inner 1 (A 1) and SumKeep
// (a per-channel sum of N×C×P: A N, B P) both run here.
__global__ void gw_reduce_rows(const float *in, float *part, int nrows, int A, int B, long long strideA,
                               long long strideC, int splits) {
    __shared__ float sh[32];
    long long total = (long long)A * B, chunk = (total + splits - 1) / splits;
    int s = blockIdx.x;
    for (int r = blockIdx.y; r < nrows; r += gridDim.y) {
        const float *p = in + r * strideC;
        long long lo = s * chunk, hi = lo + chunk < total ? lo + chunk : total;
        float v = 0.f;
        if (A == 1) {
            for (long long e = lo + threadIdx.x; e < hi; e += blockDim.x) v += p[e];
        } else {
            for (long long e = lo + threadIdx.x; e < hi; e += blockDim.x) {
                u32 a = (u32)e / (u32)B, b = (u32)e - a * (u32)B;
                v += p[a * strideA + b];
            }
        }
        v = gw_block_sum(v, sh);
        if (threadIdx.x == 0) part[(long long)s * nrows + r] = v;
    }
}

// Columns of a reduction, in parts: out (outer×inner) = Σ over red of in
// (outer×red×inner). Blocks of 32×8 threads: 32 neighbouring columns
// (coalesced), 8 rows at a time; block (x, y) takes column tile x of
// pair y = o·splits + s and writes part[(s·outer + o)·inner + k].
__global__ void gw_reduce_cols(const float *in, float *part, int outer, int red, int inner, int splits) {
    __shared__ float sh[8][33];
    int tx = threadIdx.x, ty = threadIdx.y;
    int chunk = (red + splits - 1) / splits;
    for (long long y = blockIdx.y; y < (long long)outer * splits; y += gridDim.y) {
        int o = (int)(y / splits), s = (int)(y % splits);
        int k = blockIdx.x * 32 + tx;
        int lo = s * chunk, hi = lo + chunk < red ? lo + chunk : red;
        float v = 0.f;
        if (k < inner)
            for (int r = lo + ty; r < hi; r += 8) v += in[((long long)o * red + r) * inner + k];
        sh[ty][tx] = v;
        __syncthreads();
        if (ty == 0) {
            for (int j = 1; j < 8; j++) v += sh[j][tx];
            if (k < inner) part[((long long)s * outer + o) * inner + k] = v;
        }
        __syncthreads();
    }
}

// out[i] = Σ over s of part[s·n + i] (+ beta·out[i]): the second pass of
// the reductions and of the split-K SGEMM
__global__ void gw_reduce_final(const float *part, float *out, int n, int splits, float beta) {
    GRID_LOOP(i, n) {
        float v = 0.f;
        for (int s = 0; s < splits; s++) v += part[(long long)s * n + i];
        out[i] = beta != 0.f ? v + beta * out[i] : v;
    }
}

// (log-)softmax along rows; one thread per row
__global__ void gw_softmax(const float *in, float *out, int rows, int cols, int lg) {
    GRID_LOOP(r, rows) {
        const float *x = in + r * cols;
        float *y = out + r * cols;
        float mx = x[0];
        for (int j = 1; j < cols; j++) mx = fmaxf(mx, x[j]);
        float s = 0.f;
        for (int j = 0; j < cols; j++) {
            float e = expf(x[j] - mx);
            s += e;
            y[j] = lg ? x[j] - mx : e;
        }
        float ls = logf(s);
        for (int j = 0; j < cols; j++) y[j] = lg ? y[j] - ls : y[j] / s;
    }
}

__global__ void gw_softmax_grad(const float *y, const float *g, float *out, int rows, int cols, int lg) {
    GRID_LOOP(r, rows) {
        const float *yy = y + r * cols, *gg = g + r * cols;
        float *dx = out + r * cols;
        float s = 0.f;
        if (lg) {
            for (int j = 0; j < cols; j++) s += gg[j];
            for (int j = 0; j < cols; j++) dx[j] = gg[j] - expf(yy[j]) * s;
        } else {
            for (int j = 0; j < cols; j++) s += yy[j] * gg[j];
            for (int j = 0; j < cols; j++) dx[j] = (gg[j] - s) * yy[j];
        }
    }
}

// max pooling without padding; idx holds the winner's place in its window
__global__ void gw_maxpool(const float *in, float *out, float *idx, int planes, int H, int W,
                           int OH, int OW, int KH, int KW, int SH, int SW) {
    long long n = (long long)planes * OH * OW;
    GRID_LOOP(i, n) {
        u32 u = (u32)i, q = u / (u32)OW;
        int ox = (int)(u - q * (u32)OW), oy = (int)(q % (u32)OH);
        u32 plane = q / (u32)OH;
        const float *src = in + (long long)plane * H * W;
        float best = -3.402823466e38f;
        int at = -1;
        int y0 = oy * SH, x0 = ox * SW;
        for (int ky = 0; ky < KH && y0 + ky < H; ky++)
            for (int kx = 0; kx < KW && x0 + kx < W; kx++) {
                float v = src[(y0 + ky) * W + x0 + kx];
                if (v > best) { best = v; at = ky * KW + kx; }
            }
        out[i] = best;
        idx[i] = (float)at;
    }
}

// the pooling's gradient, gathered: each input element sums the gradients
// of the windows it won (no fill, no atomics), times a ReLU mask when given
__global__ void gw_maxpool_grad(const float *g, const float *idx, const float *mask, float *out, int planes,
                                int H, int W, int OH, int OW, int KH, int KW, int SH, int SW) {
    long long n = (long long)planes * H * W;
    GRID_LOOP(i, n) {
        u32 u = (u32)i, q = u / (u32)W;
        int x = (int)(u - q * (u32)W), y = (int)(q % (u32)H);
        long long plane = q / (u32)H;
        int oy0 = y >= KH ? (y - KH) / SH + 1 : 0, ox0 = x >= KW ? (x - KW) / SW + 1 : 0;
        int oy1 = y / SH < OH - 1 ? y / SH : OH - 1, ox1 = x / SW < OW - 1 ? x / SW : OW - 1;
        float s = 0.f;
        for (int oy = oy0; oy <= oy1; oy++)
            for (int ox = ox0; ox <= ox1; ox++) {
                long long o = (plane * OH + oy) * OW + ox;
                int at = (int)idx[o];
                if (at >= 0 && oy * SH + at / KW == y && ox * SW + at % KW == x) s += g[o];
            }
        out[i] = mask ? s * mask[i] : s;
    }
}

// batch norm in training: one block (256 threads) per channel computes the
// batch mean and biased variance, saves mean and 1/σ, updates the running
// mean and unbiased variance, and normalises
__global__ void gw_bn_train(const float *x, float *out, float *save, float *running, int N, int C, int HW,
                            float momentum, float eps) {
    __shared__ float sh[32];
    int c = blockIdx.x;
    if (c >= C) return;
    long long cnt = (long long)N * HW;
    float s = 0.f;
    for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
        u32 b = (u32)j / (u32)HW, k = (u32)j - b * (u32)HW;
        s += x[((long long)b * C + c) * HW + k];
    }
    float mean = gw_block_sum(s, sh) / (float)cnt;
    float ss = 0.f;
    for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
        u32 b = (u32)j / (u32)HW, k = (u32)j - b * (u32)HW;
        float d = x[((long long)b * C + c) * HW + k] - mean;
        ss += d * d;
    }
    ss = gw_block_sum(ss, sh);
    float inv = 1.f / sqrtf(ss / (float)cnt + eps);
    if (threadIdx.x == 0) {
        save[c] = mean;
        save[C + c] = inv;
        running[c] = momentum * mean + (1.f - momentum) * running[c];
        running[C + c] = momentum * (ss / (float)(cnt - 1)) + (1.f - momentum) * running[C + c];
    }
    for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
        u32 b = (u32)j / (u32)HW, k = (u32)j - b * (u32)HW;
        long long at = ((long long)b * C + c) * HW + k;
        out[at] = (x[at] - mean) * inv;
    }
}

__global__ void gw_bn_eval(const float *x, float *out, const float *running, int N, int C, int HW, float eps) {
    long long n = (long long)N * C * HW;
    GRID_LOOP(i, n) {
        u32 c = ((u32)i / (u32)HW) % (u32)C;
        out[i] = (x[i] - running[c]) / sqrtf(running[C + c] + eps);
    }
}

// batch-norm gradient in training: one block per channel
__global__ void gw_bn_grad(const float *x, const float *g, float *out, const float *save, int N, int C, int HW) {
    __shared__ float sh[32];
    int c = blockIdx.x;
    if (c >= C) return;
    long long cnt = (long long)N * HW;
    float mean = save[c], inv = save[C + c];
    float s = 0.f, dot = 0.f;
    for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
        u32 b = (u32)j / (u32)HW, k = (u32)j - b * (u32)HW;
        long long at = ((long long)b * C + c) * HW + k;
        s += g[at];
        dot += (x[at] - mean) * g[at];
    }
    s = gw_block_sum(s, sh);
    dot = gw_block_sum(dot, sh);
    float k2 = dot * inv * inv / (float)cnt, gm = s / (float)cnt;
    for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
        u32 b = (u32)j / (u32)HW, k = (u32)j - b * (u32)HW;
        long long at = ((long long)b * C + c) * HW + k;
        out[at] = (g[at] - (x[at] - mean) * k2 - gm) * inv;
    }
}

// columns of the whole batch: row (c,ky,kx), column (n, oy, ox)
__global__ void gw_im2col(const float *x, float *cols, int N, int C, int H, int W, int K, int pad, int OH, int OW,
                          int S) {
    long long P = (long long)OH * OW, NP = N * P;
    long long n = (long long)C * K * K * NP;
    GRID_LOOP(i, n) {
        u32 u = (u32)i, row = u / (u32)NP, col = u - row * (u32)NP;
        u32 rk = row / (u32)K, kx = row - rk * (u32)K, c = rk / (u32)K, ky = rk - c * (u32)K;
        u32 b = col / (u32)P, p = col - b * (u32)P, py = p / (u32)OW, px = p - py * (u32)OW;
        int iy = (int)py * S + (int)ky - pad, ix = (int)px * S + (int)kx - pad;
        cols[i] = (iy >= 0 && iy < H && ix >= 0 && ix < W) ? x[(((long long)b * C + c) * H + iy) * W + ix] : 0.f;
    }
}

// the adjoint: each image pixel gathers the columns that read it (stride
// S: the output positions o with o·S + k − pad on it)
__global__ void gw_col2im(const float *cols, float *x, int N, int C, int H, int W, int K, int pad, int OH, int OW,
                          int S) {
    long long P = (long long)OH * OW, NP = N * P;
    long long n = (long long)N * C * H * W;
    GRID_LOOP(i, n) {
        u32 u = (u32)i, q = u / (u32)W, r = q / (u32)H, b = r / (u32)C;
        int ix = (int)(u - q * (u32)W), iy = (int)(q - r * (u32)H), c = (int)(r - b * (u32)C);
        float s = 0.f;
        for (int ky = 0; ky < K; ky++) {
            int sy = iy - ky + pad, oy = sy / S;
            if (sy < 0 || oy * S != sy || oy >= OH) continue;
            for (int kx = 0; kx < K; kx++) {
                int sx = ix - kx + pad, ox = sx / S;
                if (sx < 0 || ox * S != sx || ox >= OW) continue;
                s += cols[((long long)(c * K + ky) * K + kx) * NP + b * P + oy * OW + ox];
            }
        }
        x[i] = s;
    }
}

// out (B×A×C) from in (A×B×C), with the epilogue by the index in out (a
// convolution's bias and ReLU)
__global__ void gw_swap01(const float *in, float *out, int A, int B, int C, const float *scale, const float *bias,
                          int inner, int c, float *mask) {
    long long n = (long long)A * B * C;
    GRID_LOOP(i, n) {
        u32 u = (u32)i, q = u / (u32)C, k = u - q * (u32)C, a = q / (u32)B, j = q - a * (u32)B;
        u32 o = (j * (u32)A + a) * (u32)C + k;
        out[o] = gw_epi(in[i], o, scale, bias, inner, c, mask);
    }
}

// Adam over every parameter at once (they lie in one block); the scalars
// β1, β2, step, ε, decay are read from s
__global__ void gw_adam(float *p, const float *g, float *m, float *v, int n, const float *s) {
    float b1 = s[0], b2 = s[1], step = s[2], eps = s[3], decay = s[4];
    GRID_LOOP(i, n) {
        float gk = g[i];
        float mk = b1 * m[i] + (1.f - b1) * gk;
        float vk = b2 * v[i] + (1.f - b2) * gk * gk;
        m[i] = mk;
        v[i] = vk;
        p[i] = p[i] * decay - step * mk / (sqrtf(vk) + eps);
    }
}

// SGD with momentum over every parameter; the scalars lr, momentum, decay
// are read from s
__global__ void gw_sgd(float *p, const float *g, float *vel, int n, const float *s) {
    float lr = s[0], momentum = s[1], decay = s[2];
    GRID_LOOP(i, n) {
        float gk = g[i] + decay * p[i];
        float vk = momentum * vel[i] + gk;
        vel[i] = vk;
        p[i] -= lr * vk;
    }
}

// SGEMM for when cuBLAS is absent: C (m×n) = op(A)·op(B) + beta·C,
// row-major, 64×64 tiles of C per block of 16×16 threads (4×4 each). With
// a long k and few tiles (a convolution's filter gradient) k is split:
// blockIdx.y = tile row + tilesM·split, split z covers k from z·kchunk,
// and writes its partial product to part + z·m·n; gw_reduce_final adds
// the parts (and beta·C). part null: no split.
#define TS 64
#define TK 16
__global__ void gw_sgemm(int ta, int tb, int m, int n, int k, const float *A, const float *B, float *C, float beta,
                         int tilesM, int kchunk, float *part) {
    __shared__ float As[TK][TS + 1];
    __shared__ float Bs[TK][TS + 1];
    int tx = threadIdx.x, ty = threadIdx.y;  // 16×16
    int split = blockIdx.y / tilesM;
    int row0 = (blockIdx.y % tilesM) * TS, col0 = blockIdx.x * TS;
    int kbeg = part ? split * kchunk : 0, kend = part && kbeg + kchunk < k ? kbeg + kchunk : k;
    float acc[4][4] = {{0}};
    int lda = ta ? m : k, ldb = tb ? k : n;
    for (int k0 = kbeg; k0 < kend; k0 += TK) {
        int tid = ty * 16 + tx;
        // Neighbouring threads read neighbouring addresses (coalesced):
        // along k when the operand's rows run along k, else along m or n.
        for (int e = tid; e < TS * TK; e += 256) {
            int r, kk;  // A tile: rows of C × k
            if (ta) { r = e % TS; kk = e / TS; } else { r = e / TK; kk = e % TK; }
            int gr = row0 + r, gk = k0 + kk;
            float va = 0.f;
            if (gr < m && gk < kend) va = ta ? A[(long long)gk * lda + gr] : A[(long long)gr * lda + gk];
            As[kk][r] = va;
            int c, kb;  // B tile: k × cols of C
            if (tb) { c = e / TK; kb = e % TK; } else { c = e % TS; kb = e / TS; }
            int gc = col0 + c, gkb = k0 + kb;
            float vb = 0.f;
            if (gc < n && gkb < kend) vb = tb ? B[(long long)gc * ldb + gkb] : B[(long long)gkb * ldb + gc];
            Bs[kb][c] = vb;
        }
        __syncthreads();
        for (int kk = 0; kk < TK; kk++) {
            float a[4], b[4];
            for (int i = 0; i < 4; i++) a[i] = As[kk][ty + 16 * i];
            for (int j = 0; j < 4; j++) b[j] = Bs[kk][tx + 16 * j];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    float *out = part ? part + (long long)split * m * n : C;
    for (int i = 0; i < 4; i++) {
        int r = row0 + ty + 16 * i;
        if (r >= m) continue;
        for (int j = 0; j < 4; j++) {
            int c = col0 + tx + 16 * j;
            if (c >= n) continue;
            float *dst = out + (long long)r * n + c;
            *dst = acc[i][j] + (!part && beta != 0.f ? beta * *dst : 0.f);
        }
    }
}

// The detection loss (exec.Det, exec/detloss.go): a cell's head values lie
// hw apart (channels of an N×(5+classes)×H×W tensor), its target is 8
// floats: objectness target and weight, positive weight, class, box.
__device__ __forceinline__ float gw_bce(float x, float t) {
    return fmaxf(x, 0.f) - x * t + log1pf(expf(-fabsf(x)));
}

__device__ __forceinline__ float gw_sign(float v) { return v > 0.f ? 1.f : (v < 0.f ? -1.f : 0.f); }

// 1 − GIoU of the raw box r (dx, dy, tw, th) and the target t (x1, y1,
// x2, y2); with g, its gradient by the raw values.
__device__ float gw_giou(const float *r, const float *t, float *g) {
    float tw = fminf(fmaxf(r[2], -8.f), 8.f), th = fminf(fmaxf(r[3], -8.f), 8.f);
    float w = expf(tw), h = expf(th);
    float px1 = r[0] - w / 2, px2 = r[0] + w / 2, py1 = r[1] - h / 2, py2 = r[1] + h / 2;
    float iw = fmaxf(fminf(px2, t[2]) - fmaxf(px1, t[0]), 0.f);
    float ih = fmaxf(fminf(py2, t[3]) - fmaxf(py1, t[1]), 0.f);
    float in = iw * ih;
    float u = w * h + (t[2] - t[0]) * (t[3] - t[1]) - in + 1e-7f;
    float cw = fmaxf(px2, t[2]) - fminf(px1, t[0]), ch = fmaxf(py2, t[3]) - fminf(py1, t[1]);
    float c = cw * ch + 1e-7f;
    float loss = 2.f - in / u - u / c;
    if (!g) return loss;
    float dI = -1.f / u - in / (u * u) + 1.f / c, dA = in / (u * u) - 1.f / c, dC = u / (c * c);
    float g0 = -h * dA, g2 = h * dA, g1 = -w * dA, g3 = w * dA;
    if (iw > 0.f && px1 > t[0]) g0 -= ih * dI;
    if (iw > 0.f && px2 < t[2]) g2 += ih * dI;
    if (ih > 0.f && py1 > t[1]) g1 -= iw * dI;
    if (ih > 0.f && py2 < t[3]) g3 += iw * dI;
    if (px1 < t[0]) g0 -= ch * dC;
    if (px2 > t[2]) g2 += ch * dC;
    if (py1 < t[1]) g1 -= cw * dC;
    if (py2 > t[3]) g3 += cw * dC;
    g[0] = g0 + g2;
    g[1] = g1 + g3;
    g[2] = tw == r[2] ? (g2 - g0) * w / 2 : 0.f;
    g[3] = th == r[3] ? (g3 - g1) * h / 2 : 0.f;
    return loss;
}

// the L1 term's target: the box's centre and log size
__device__ __forceinline__ void gw_l1_target(const float *t, float *lt) {
    lt[0] = (t[0] + t[2]) / 2;
    lt[1] = (t[1] + t[3]) / 2;
    lt[2] = logf(fmaxf(t[2] - t[0], 1e-3f));
    lt[3] = logf(fmaxf(t[3] - t[1], 1e-3f));
}

// each cell's terms (box, class, objectness), one thread a cell
__global__ void gw_det_loss(const float *head, const float *tgt, float *terms, int N, int K, int H, int W, float giouGain,
                            float l1Gain, float clsGain, float objGain) {
    u32 hw = (u32)H * (u32)W, ch = 5u + (u32)K;
    GRID_LOOP(q, (long long)N * hw) {
        u32 n = (u32)q / hw, p = (u32)q - n * hw;
        const float *x = head + (long long)n * ch * hw + p, *t = tgt + q * 8;
        float *o = terms + q * 3;
        o[0] = 0.f;
        o[1] = 0.f;
        o[2] = t[1] * objGain * gw_bce(x[4 * hw], t[0]);
        float pos = t[2];
        if (pos == 0.f) continue;
        int cls = (int)t[3];
        float s = 0.f;
        for (int c = 0; c < K; c++) s += gw_bce(x[(5 + c) * hw], c == cls ? 1.f : 0.f);
        o[1] = pos * clsGain * s;
        float r[4] = {x[0], x[hw], x[2 * hw], x[3 * hw]}, lt[4];
        gw_l1_target(t + 4, lt);
        float l1 = 0.f;
        for (int k = 0; k < 4; k++) l1 += fabsf(r[k] - lt[k]);
        o[0] = pos * (giouGain * gw_giou(r, t + 4, 0) + l1Gain * l1);
    }
}

// the head's gradient, g the gradient of the three summed terms (read
// from device memory), one thread a cell
__global__ void gw_det_loss_grad(const float *head, const float *tgt, const float *g, float *out, int N, int K, int H,
                                 int W, float giouGain, float l1Gain, float clsGain, float objGain) {
    u32 hw = (u32)H * (u32)W, ch = 5u + (u32)K;
    float gb = g[0], gc = g[1], go = g[2];
    GRID_LOOP(q, (long long)N * hw) {
        u32 n = (u32)q / hw, p = (u32)q - n * hw;
        const float *x = head + (long long)n * ch * hw + p, *t = tgt + q * 8;
        float *o = out + (long long)n * ch * hw + p;
        o[4 * hw] = go * t[1] * objGain * (1.f / (1.f + expf(-x[4 * hw])) - t[0]);
        float pos = t[2];
        if (pos == 0.f) {
            for (int k = 0; k < 4; k++) o[k * hw] = 0.f;
            for (int c = 0; c < K; c++) o[(5 + c) * hw] = 0.f;
            continue;
        }
        int cls = (int)t[3];
        for (int c = 0; c < K; c++)
            o[(5 + c) * hw] = gc * pos * clsGain * (1.f / (1.f + expf(-x[(5 + c) * hw])) - (c == cls ? 1.f : 0.f));
        float r[4] = {x[0], x[hw], x[2 * hw], x[3 * hw]}, lt[4], gg[4];
        gw_l1_target(t + 4, lt);
        gw_giou(r, t + 4, gg);
        for (int k = 0; k < 4; k++) o[k * hw] = gb * pos * (giouGain * gg[k] + l1Gain * gw_sign(r[k] - lt[k]));
    }
}

#ifdef __cplusplus
}  // extern "C"
#endif
