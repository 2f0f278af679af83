// gpuwizard's CUDA kernels for the executor (trainer/exec). Row-major
// float32 throughout; one thread per output element unless noted.
// Compiled to PTX by `make kernels` (nvcc -ptx); the PTX is committed and
// embedded, so neither the build nor CI needs nvcc. The same file also
// compiles as C on the CPU (trainer/exec/internal/cudaemu), where the tests
// run every kernel through the CUDA backend without a GPU.

#define GRID_LOOP(i, n) \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (long long)blockDim.x * gridDim.x)

#ifdef __cplusplus
extern "C" {
#endif

__global__ void gw_fill(float *d, int n, float v) {
    GRID_LOOP(i, n) d[i] = v;
}

// op: 0 + 1 - 2 * 3 / 4 >= 5 > 6 <= 7 <  (exec.BinOp order)
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
    }
    return __int_as_float(0x7fc00000);
}

__global__ void gw_binary(int op, const float *a, const float *b, float *o, int n, int as, int bs) {
    GRID_LOOP(i, n) o[i] = gw_binop(op, a[as ? 0 : i], b[bs ? 0 : i]);
}

// op: 0 neg 1 exp 2 log 3 sqrt 4 square 5 abs (exec.UnOp order)
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
        }
        o[i] = x;
    }
}

// out (outer×rep×inner) from in (outer×1×inner)
__global__ void gw_repeat(const float *in, float *out, int outer, int rep, int inner) {
    long long n = (long long)outer * rep * inner;
    GRID_LOOP(i, n) {
        long long o = i / ((long long)rep * inner);
        int k = (int)(i % inner);
        out[i] = in[o * inner + k];
    }
}

// out (outer×inner) = Σ over red of in (outer×red×inner); one thread per output
__global__ void gw_sum_axis(const float *in, float *out, int outer, int red, int inner) {
    long long n = (long long)outer * inner;
    GRID_LOOP(i, n) {
        long long o = i / inner;
        int k = (int)(i % inner);
        const float *p = in + o * red * (long long)inner + k;
        float s = 0.f;
        for (int r = 0; r < red; r++) s += p[(long long)r * inner];
        out[i] = s;
    }
}

// block reduction helper: 256 threads
__device__ float gw_block_sum(float v, float *sh) {
    int t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) sh[t] += sh[t + s];
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

// out[row] = Σ in[row, :]; one block of 256 threads per row (inner == 1)
__global__ void gw_sum_rows(const float *in, float *out, int rows, int cols) {
    __shared__ float sh[256];
    for (int row = blockIdx.x; row < rows; row += gridDim.x) {
        const float *p = in + (long long)row * cols;
        float s = 0.f;
        for (int j = threadIdx.x; j < cols; j += blockDim.x) s += p[j];
        s = gw_block_sum(s, sh);
        if (threadIdx.x == 0) out[row] = s;
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
        int ox = (int)(i % OW), oy = (int)((i / OW) % OH);
        long long plane = i / ((long long)OH * OW);
        const float *src = in + plane * H * W;
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

// out must be zeroed first (gw_fill); windows may overlap, hence atomics
__global__ void gw_maxpool_grad(const float *g, const float *idx, float *out, int planes, int H, int W,
                                int OH, int OW, int KW, int SH, int SW) {
    long long n = (long long)planes * OH * OW;
    GRID_LOOP(i, n) {
        int at = (int)idx[i];
        if (at < 0) continue;
        int ox = (int)(i % OW), oy = (int)((i / OW) % OH);
        long long plane = i / ((long long)OH * OW);
        int y = oy * SH + at / KW, x = ox * SW + at % KW;
        atomicAdd(out + plane * H * W + y * W + x, g[i]);
    }
}

// batch norm in training: one block (256 threads) per channel computes the
// batch mean and biased variance, saves mean and 1/σ, updates the running
// mean and unbiased variance, and normalises
__global__ void gw_bn_train(const float *x, float *out, float *save, float *running, int N, int C, int HW,
                            float momentum, float eps) {
    __shared__ float sh[256];
    int c = blockIdx.x;
    if (c >= C) return;
    long long cnt = (long long)N * HW;
    float s = 0.f;
    for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
        long long b = j / HW, k = j % HW;
        s += x[(b * C + c) * HW + k];
    }
    float mean = gw_block_sum(s, sh) / (float)cnt;
    float ss = 0.f;
    for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
        long long b = j / HW, k = j % HW;
        float d = x[(b * C + c) * HW + k] - mean;
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
        long long b = j / HW, k = j % HW, at = (b * C + c) * HW + k;
        out[at] = (x[at] - mean) * inv;
    }
}

__global__ void gw_bn_eval(const float *x, float *out, const float *running, int N, int C, int HW, float eps) {
    long long n = (long long)N * C * HW;
    GRID_LOOP(i, n) {
        int c = (int)((i / HW) % C);
        out[i] = (x[i] - running[c]) / sqrtf(running[C + c] + eps);
    }
}

// batch-norm gradient in training: one block per channel
__global__ void gw_bn_grad(const float *x, const float *g, float *out, const float *save, int N, int C, int HW) {
    __shared__ float sh[256];
    int c = blockIdx.x;
    if (c >= C) return;
    long long cnt = (long long)N * HW;
    float mean = save[c], inv = save[C + c];
    float s = 0.f, dot = 0.f;
    for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
        long long b = j / HW, k = j % HW, at = (b * C + c) * HW + k;
        s += g[at];
        dot += (x[at] - mean) * g[at];
    }
    s = gw_block_sum(s, sh);
    dot = gw_block_sum(dot, sh);
    float k2 = dot * inv * inv / (float)cnt, gm = s / (float)cnt;
    for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
        long long b = j / HW, k = j % HW, at = (b * C + c) * HW + k;
        out[at] = (g[at] - (x[at] - mean) * k2 - gm) * inv;
    }
}

// columns of the whole batch: row (c,ky,kx), column (n, oy, ox)
__global__ void gw_im2col(const float *x, float *cols, int N, int C, int H, int W, int K, int pad, int OH, int OW) {
    long long P = (long long)OH * OW, NP = N * P;
    long long n = (long long)C * K * K * NP;
    GRID_LOOP(i, n) {
        long long col = i % NP, row = i / NP;
        int kx = (int)(row % K), ky = (int)((row / K) % K), c = (int)(row / (K * K));
        int b = (int)(col / P), p = (int)(col % P);
        int iy = p / OW + ky - pad, ix = p % OW + kx - pad;
        cols[i] = (iy >= 0 && iy < H && ix >= 0 && ix < W) ? x[(((long long)b * C + c) * H + iy) * W + ix] : 0.f;
    }
}

// the adjoint: each image pixel gathers the columns that read it
__global__ void gw_col2im(const float *cols, float *x, int N, int C, int H, int W, int K, int pad, int OH, int OW) {
    long long P = (long long)OH * OW, NP = N * P;
    long long n = (long long)N * C * H * W;
    GRID_LOOP(i, n) {
        int ix = (int)(i % W), iy = (int)((i / W) % H), c = (int)((i / ((long long)H * W)) % C);
        long long b = i / ((long long)C * H * W);
        float s = 0.f;
        for (int ky = 0; ky < K; ky++) {
            int oy = iy - ky + pad;
            if (oy < 0 || oy >= OH) continue;
            for (int kx = 0; kx < K; kx++) {
                int ox = ix - kx + pad;
                if (ox < 0 || ox >= OW) continue;
                s += cols[((long long)(c * K + ky) * K + kx) * NP + b * P + oy * OW + ox];
            }
        }
        x[i] = s;
    }
}

// out (B×A×C) from in (A×B×C), plus bias[a] when hasBias
__global__ void gw_swap01(const float *in, float *out, int A, int B, int C, const float *bias, int hasBias) {
    long long n = (long long)A * B * C;
    GRID_LOOP(i, n) {
        int k = (int)(i % C);
        long long j = (i / C) % B, a = i / ((long long)B * C);
        out[(j * A + a) * C + k] = in[i] + (hasBias ? bias[a] : 0.f);
    }
}

__global__ void gw_adam(float *p, const float *g, float *m, float *v, int n, float b1, float b2, float step,
                        float eps, float decay) {
    GRID_LOOP(i, n) {
        float gk = g[i];
        float mk = b1 * m[i] + (1.f - b1) * gk;
        float vk = b2 * v[i] + (1.f - b2) * gk * gk;
        m[i] = mk;
        v[i] = vk;
        p[i] = p[i] * decay - step * mk / (sqrtf(vk) + eps);
    }
}

__global__ void gw_sgd(float *p, const float *g, float *vel, int n, float lr, float momentum, float decay) {
    GRID_LOOP(i, n) {
        float gk = g[i] + decay * p[i];
        vel[i] = momentum * vel[i] + gk;
        p[i] -= lr * vel[i];
    }
}

// SGEMM for when cuBLAS is absent: C (m×n) = op(A)·op(B) + beta·C,
// row-major, 64×64 tiles of C per block of 16×16 threads (4×4 each).
#define TS 64
#define TK 16
__global__ void gw_sgemm(int ta, int tb, int m, int n, int k, const float *A, const float *B, float *C, float beta) {
    __shared__ float As[TK][TS + 1];
    __shared__ float Bs[TK][TS + 1];
    int tx = threadIdx.x, ty = threadIdx.y;  // 16×16
    int row0 = blockIdx.y * TS, col0 = blockIdx.x * TS;
    float acc[4][4] = {{0}};
    int lda = ta ? m : k, ldb = tb ? k : n;
    for (int k0 = 0; k0 < k; k0 += TK) {
        int tid = ty * 16 + tx;
        // Neighbouring threads read neighbouring addresses (coalesced):
        // along k when the operand's rows run along k, else along m or n.
        for (int e = tid; e < TS * TK; e += 256) {
            int r, kk;  // A tile: rows of C × k
            if (ta) { r = e % TS; kk = e / TS; } else { r = e / TK; kk = e % TK; }
            int gr = row0 + r, gk = k0 + kk;
            float va = 0.f;
            if (gr < m && gk < k) va = ta ? A[(long long)gk * lda + gr] : A[(long long)gr * lda + gk];
            As[kk][r] = va;
            int c, kb;  // B tile: k × cols of C
            if (tb) { c = e / TK; kb = e % TK; } else { c = e % TS; kb = e / TS; }
            int gc = col0 + c, gkb = k0 + kb;
            float vb = 0.f;
            if (gc < n && gkb < k) vb = tb ? B[(long long)gc * ldb + gkb] : B[(long long)gkb * ldb + gc];
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
    for (int i = 0; i < 4; i++) {
        int r = row0 + ty + 16 * i;
        if (r >= m) continue;
        for (int j = 0; j < 4; j++) {
            int c = col0 + tx + 16 * j;
            if (c >= n) continue;
            float *dst = C + (long long)r * n + c;
            *dst = acc[i][j] + (beta != 0.f ? beta * *dst : 0.f);
        }
    }
}

#ifdef __cplusplus
}  // extern "C"
#endif
