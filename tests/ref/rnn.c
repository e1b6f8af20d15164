/* ref/rnn.c: the reference recurrent networks (ref/rnn.h), forward and backward through time, in
   double, one sequence and one step at a time. The forward pass keeps what each step computed
   (gate values, cell states, the states it read) so that the backward pass differentiates the
   same equations step by step, last step first. */
#include "ref/rnn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ref_rnn_gates(cudnnRNNMode_t mode)
{
    return mode == CUDNN_LSTM ? 4 : mode == CUDNN_GRU ? 3 : 1;
}

int ref_rnn_layer_input(const struct ref_rnn *r, int layer)
{
    return layer == 0 ? r->input : r->dirs * r->proj;
}

/* Per pseudo-layer: W (G x H x in_max), R (G x H x P), b_W (G x H), b_R (G x H), W_p (P x H);
   in_max is the largest layer input, so every pseudo-layer has the same size. */
static int64_t in_max(const struct ref_rnn *r)
{
    return r->input > r->dirs * r->proj ? r->input : r->dirs * r->proj;
}

static int64_t layer_params(const struct ref_rnn *r)
{
    int64_t G = ref_rnn_gates(r->mode), H = r->hidden, P = r->proj;
    return G * H * in_max(r) + G * H * P + 2 * G * H + P * H;
}

int64_t ref_rnn_param_count(const struct ref_rnn *r)
{
    return layer_params(r) * r->layers * r->dirs;
}

int64_t ref_rnn_param(const struct ref_rnn *r, int pseudo_layer, enum ref_rnn_block block, int g)
{
    int64_t G = ref_rnn_gates(r->mode), H = r->hidden, P = r->proj, I = in_max(r);
    int64_t at = layer_params(r) * pseudo_layer;
    switch (block) {
    case REF_RNN_W: return at + g * H * I;
    case REF_RNN_R: return at + G * H * I + g * H * P;
    case REF_RNN_BW: return at + G * H * I + G * H * P + g * H;
    case REF_RNN_BR: return at + G * H * I + G * H * P + G * H + g * H;
    case REF_RNN_WP: return at + G * H * I + G * H * P + 2 * G * H;
    }
    return -1;
}

static double sigmoid(double v)
{
    return 1 / (1 + exp(-v));
}

/* What one step of one sequence computed. */
struct step {
    double *gate;  /* G x H: the gate values after their nonlinearity */
    double *rh;    /* GRU: R_h h_{t-1} + b_Rh */
    double *cpre;  /* LSTM: c_t before clipping */
    double *c;     /* LSTM: c_t */
    double *hfull; /* LSTM: o tanh(c_t), before the projection */
    double *hprev; /* P: the state read */
    double *cprev; /* H */
    double *h;     /* P: the state written (the output) */
};

struct cache {
    const struct ref_rnn *r;
    double *buf;
    int64_t per; /* doubles a step */
    double **inputs; /* per layer: [T][N][in_l] */
};

static int64_t step_doubles(const struct ref_rnn *r)
{
    int64_t G = ref_rnn_gates(r->mode), H = r->hidden, P = r->proj;
    return G * H + 5 * H + 2 * P;
}

static struct step step_at(const struct cache *c, int pl, int t, int n)
{
    const struct ref_rnn *r = c->r;
    int64_t G = ref_rnn_gates(r->mode), H = r->hidden, P = r->proj;
    double *b = c->buf + (((int64_t)pl * r->T + t) * r->N + n) * c->per;
    struct step s;
    s.gate = b, b += G * H;
    s.rh = b, b += H;
    s.cpre = b, b += H;
    s.c = b, b += H;
    s.hfull = b, b += H;
    s.cprev = b, b += H;
    s.hprev = b, b += P;
    s.h = b;
    return s;
}

/* sum_k M[j][k] v[k], M row-major rows x cols. */
static double dot_row(const double *m, int cols, int j, const double *v)
{
    double s = 0;
    for (int k = 0; k < cols; k++) s += m[(int64_t)j * cols + k] * v[k];
    return s;
}

/* An LSTM with a projection: its output and recurrent state is W_p applied to o tanh(c_t). */
static bool has_proj(const struct ref_rnn *r)
{
    return r->mode == CUDNN_LSTM && r->proj != r->hidden;
}

/* One step of pseudo-layer pl: x (in values), the step's hprev and cprev filled. */
static void cell_forward(const struct ref_rnn *r, const double *w, int layer, int pl, const double *x,
                         struct step *s)
{
    int G = ref_rnn_gates(r->mode), H = r->hidden, P = r->proj, in = ref_rnn_layer_input(r, layer);
    bool skip = r->skip_input && layer == 0;
    const double *bw = w + ref_rnn_param(r, pl, REF_RNN_BW, 0), *br = w + ref_rnn_param(r, pl, REF_RNN_BR, 0);
    double *pre = malloc(sizeof(double) * (size_t)(G * H));
    for (int g = 0; g < G; g++) {
        const double *W = w + ref_rnn_param(r, pl, REF_RNN_W, g), *R = w + ref_rnn_param(r, pl, REF_RNN_R, g);
        for (int j = 0; j < H; j++) {
            double wx = skip ? x[j] : dot_row(W, in, j, x);
            double rh = dot_row(R, P, j, s->hprev) + br[g * H + j];
            if (r->mode == CUDNN_GRU && g == 2) {
                s->rh[j] = rh;
                pre[g * H + j] = wx + bw[g * H + j]; /* r (R_h h + b_Rh) added below */
            } else {
                pre[g * H + j] = wx + bw[g * H + j] + rh;
            }
        }
    }
    switch (r->mode) {
    case CUDNN_RNN_RELU:
    case CUDNN_RNN_TANH:
        for (int j = 0; j < H; j++) {
            double v = pre[j];
            s->gate[j] = r->mode == CUDNN_RNN_RELU ? (v > 0 ? v : 0) : tanh(v);
            s->h[j] = s->gate[j];
        }
        break;
    case CUDNN_LSTM:
        for (int j = 0; j < H; j++) {
            double i = sigmoid(pre[j]), f = sigmoid(pre[H + j]), cn = tanh(pre[2 * H + j]), o = sigmoid(pre[3 * H + j]);
            s->gate[j] = i, s->gate[H + j] = f, s->gate[2 * H + j] = cn, s->gate[3 * H + j] = o;
            double c = f * s->cprev[j] + i * cn;
            s->cpre[j] = c;
            if (r->clip) c = c < r->lclip ? r->lclip : c > r->rclip ? r->rclip : c;
            s->c[j] = c;
            s->hfull[j] = o * tanh(c);
        }
        if (!has_proj(r))
            memcpy(s->h, s->hfull, sizeof(double) * (size_t)H);
        break;
    case CUDNN_GRU:
        for (int j = 0; j < H; j++) {
            double rr = sigmoid(pre[j]), z = sigmoid(pre[H + j]);
            double hn = tanh(pre[2 * H + j] + rr * s->rh[j]);
            s->gate[j] = rr, s->gate[H + j] = z, s->gate[2 * H + j] = hn;
            s->h[j] = (1 - z) * hn + z * s->hprev[j];
        }
        break;
    }
    free(pre);
}

static void run_forward(const struct ref_rnn *r, const double *w, const double *x, const double *hx,
                        const double *cx, double *y, double *hy, double *cy, struct cache *c)
{
    int H = r->hidden, P = r->proj, D = r->dirs;
    double *out = NULL;
    for (int l = 0; l < r->layers; l++) {
        int in = ref_rnn_layer_input(r, l);
        double *lin = c->inputs[l];
        if (l == 0) memcpy(lin, x, sizeof(double) * (size_t)r->T * r->N * in);
        else memcpy(lin, out, sizeof(double) * (size_t)r->T * r->N * in);
        free(out);
        out = calloc((size_t)r->T * r->N * D * P, sizeof(double));
        for (int d = 0; d < D; d++) {
            int pl = l * D + d;
            const double *Wp = w + ref_rnn_param(r, pl, REF_RNN_WP, 0);
            for (int n = 0; n < r->N; n++) {
                int len = r->lengths[n];
                double *h = malloc(sizeof(double) * (size_t)P), *cs = malloc(sizeof(double) * (size_t)H);
                for (int j = 0; j < P; j++) h[j] = hx ? hx[((int64_t)pl * r->N + n) * P + j] : 0;
                for (int j = 0; j < H; j++) cs[j] = cx && r->mode == CUDNN_LSTM ? cx[((int64_t)pl * r->N + n) * H + j] : 0;
                for (int st = 0; st < len; st++) {
                    int t = d ? len - 1 - st : st;
                    struct step s = step_at(c, pl, t, n);
                    memcpy(s.hprev, h, sizeof(double) * (size_t)P);
                    memcpy(s.cprev, cs, sizeof(double) * (size_t)H);
                    cell_forward(r, w, l, pl, lin + ((int64_t)t * r->N + n) * in, &s);
                    if (has_proj(r))
                        for (int j = 0; j < P; j++) s.h[j] = dot_row(Wp, H, j, s.hfull);
                    memcpy(h, s.h, sizeof(double) * (size_t)P);
                    /* the next step reads the clipped cell; cy is the last one before the clip */
                    if (r->mode == CUDNN_LSTM) memcpy(cs, st == len - 1 ? s.cpre : s.c, sizeof(double) * (size_t)H);
                    memcpy(out + ((int64_t)t * r->N + n) * D * P + d * P, h, sizeof(double) * (size_t)P);
                }
                if (hy) memcpy(hy + ((int64_t)pl * r->N + n) * P, h, sizeof(double) * (size_t)P);
                if (cy && r->mode == CUDNN_LSTM) memcpy(cy + ((int64_t)pl * r->N + n) * H, cs, sizeof(double) * (size_t)H);
                free(h), free(cs);
            }
        }
    }
    if (y)
        for (int t = 0; t < r->T; t++)
            for (int n = 0; n < r->N; n++)
                if (t < r->lengths[n])
                    memcpy(y + ((int64_t)t * r->N + n) * D * P, out + ((int64_t)t * r->N + n) * D * P,
                           sizeof(double) * (size_t)D * P);
    free(out);
}

static void cache_init(struct cache *c, const struct ref_rnn *r)
{
    c->r = r;
    c->per = step_doubles(r);
    c->buf = calloc((size_t)(r->layers * r->dirs) * r->T * r->N * c->per, sizeof(double));
    c->inputs = malloc(sizeof(double *) * (size_t)r->layers);
    for (int l = 0; l < r->layers; l++)
        c->inputs[l] = calloc((size_t)r->T * r->N * ref_rnn_layer_input(r, l), sizeof(double));
}

static void cache_free(struct cache *c)
{
    for (int l = 0; l < c->r->layers; l++) free(c->inputs[l]);
    free(c->inputs);
    free(c->buf);
}

void ref_rnn_forward(const struct ref_rnn *r, const double *w, const double *x, const double *hx,
                     const double *cx, double *y, double *hy, double *cy)
{
    struct cache c;
    cache_init(&c, r);
    run_forward(r, w, x, hx, cx, y, hy, cy, &c);
    cache_free(&c);
}

/* dM[j][k] += a[j] v[k]; dv[k] += sum_j M[j][k] a[j]. */
static void outer_add(double *dm, const double *a, int rows, const double *v, int cols)
{
    for (int j = 0; j < rows; j++)
        for (int k = 0; k < cols; k++) dm[(int64_t)j * cols + k] += a[j] * v[k];
}

static void back_add(double *dv, const double *m, const double *a, int rows, int cols)
{
    for (int j = 0; j < rows; j++)
        for (int k = 0; k < cols; k++) dv[k] += m[(int64_t)j * cols + k] * a[j];
}

/* One step backwards: dh (P) and dc (H) are the gradients of the step's outputs (at a sequence's
   last step, last, dc is dcy: that of the cell before the clip; else that of the clipped cell the
   next step read); on return they hold those of its inputs h_{t-1}, c_{t-1}; dx (in) gets the
   input's gradient added. */
static void cell_backward(const struct ref_rnn *r, const double *w, double *dw, int layer, int pl,
                          const double *x, const struct step *s, bool last, double *dh, double *dc, double *dx)
{
    int G = ref_rnn_gates(r->mode), H = r->hidden, P = r->proj, in = ref_rnn_layer_input(r, layer);
    bool skip = r->skip_input && layer == 0;
    double *da = calloc((size_t)G * H, sizeof(double));  /* d pre-activation, the part W x sees */
    double *dar = calloc((size_t)G * H, sizeof(double)); /* the part R h sees */
    double *dhfull = calloc((size_t)H, sizeof(double)), *dhp = calloc((size_t)P, sizeof(double));
    double *dcp = calloc((size_t)H, sizeof(double));
    switch (r->mode) {
    case CUDNN_RNN_RELU:
    case CUDNN_RNN_TANH:
        for (int j = 0; j < H; j++) {
            double v = s->gate[j];
            da[j] = dh[j] * (r->mode == CUDNN_RNN_RELU ? (v > 0 ? 1 : 0) : 1 - v * v);
        }
        memcpy(dar, da, sizeof(double) * (size_t)H);
        break;
    case CUDNN_LSTM:
        if (has_proj(r)) {
            const double *Wp = w + ref_rnn_param(r, pl, REF_RNN_WP, 0);
            outer_add(dw + ref_rnn_param(r, pl, REF_RNN_WP, 0), dh, P, s->hfull, H);
            back_add(dhfull, Wp, dh, P, H);
        } else {
            memcpy(dhfull, dh, sizeof(double) * (size_t)H);
        }
        for (int j = 0; j < H; j++) {
            double i = s->gate[j], f = s->gate[H + j], cn = s->gate[2 * H + j], o = s->gate[3 * H + j];
            double tc = tanh(s->c[j]);
            double dclipped = dhfull[j] * o * (1 - tc * tc) + (last ? 0 : dc[j]);
            if (r->clip && (s->cpre[j] < r->lclip || s->cpre[j] > r->rclip)) dclipped = 0;
            double dcj = dclipped + (last ? dc[j] : 0);
            da[j] = dcj * cn * i * (1 - i);
            da[H + j] = dcj * s->cprev[j] * f * (1 - f);
            da[2 * H + j] = dcj * i * (1 - cn * cn);
            da[3 * H + j] = dhfull[j] * tc * o * (1 - o);
            dcp[j] = dcj * f;
        }
        memcpy(dar, da, sizeof(double) * (size_t)G * H);
        break;
    case CUDNN_GRU:
        for (int j = 0; j < H; j++) {
            double rr = s->gate[j], z = s->gate[H + j], hn = s->gate[2 * H + j];
            double dz = dh[j] * (s->hprev[j] - hn), dhn = dh[j] * (1 - z);
            double dan = dhn * (1 - hn * hn);
            double drr = dan * s->rh[j];
            da[j] = drr * rr * (1 - rr);
            da[H + j] = dz * z * (1 - z);
            da[2 * H + j] = dan;
            dar[j] = da[j], dar[H + j] = da[H + j];
            dar[2 * H + j] = dan * rr;
            dhp[j] += dh[j] * z;
        }
        break;
    }
    for (int g = 0; g < G; g++) {
        const double *W = w + ref_rnn_param(r, pl, REF_RNN_W, g), *R = w + ref_rnn_param(r, pl, REF_RNN_R, g);
        if (skip) {
            for (int j = 0; j < H; j++) dx[j] += da[g * H + j];
        } else {
            outer_add(dw + ref_rnn_param(r, pl, REF_RNN_W, g), da + g * H, H, x, in);
            back_add(dx, W, da + g * H, H, in);
        }
        outer_add(dw + ref_rnn_param(r, pl, REF_RNN_R, g), dar + g * H, H, s->hprev, P);
        back_add(dhp, R, dar + g * H, H, P);
        for (int j = 0; j < H; j++) {
            dw[ref_rnn_param(r, pl, REF_RNN_BW, g) + j] += da[g * H + j];
            dw[ref_rnn_param(r, pl, REF_RNN_BR, g) + j] += dar[g * H + j];
        }
    }
    memcpy(dh, dhp, sizeof(double) * (size_t)P);
    memcpy(dc, dcp, sizeof(double) * (size_t)H);
    free(da), free(dar), free(dhfull), free(dhp), free(dcp);
}

void ref_rnn_backward(const struct ref_rnn *r, const double *w, const double *x, const double *hx,
                      const double *cx, const double *dy, const double *dhy, const double *dcy, double *dx,
                      double *dhx, double *dcx, double *dw)
{
    int H = r->hidden, P = r->proj, D = r->dirs;
    struct cache c;
    cache_init(&c, r);
    run_forward(r, w, x, hx, cx, NULL, NULL, NULL, &c);
    /* dout: the gradient of the current layer's outputs [T][N][D P], zero past the lengths */
    double *dout = calloc((size_t)r->T * r->N * D * P, sizeof(double));
    for (int t = 0; t < r->T; t++)
        for (int n = 0; n < r->N; n++)
            if (t < r->lengths[n])
                memcpy(dout + ((int64_t)t * r->N + n) * D * P, dy + ((int64_t)t * r->N + n) * D * P,
                       sizeof(double) * (size_t)D * P);
    for (int l = r->layers - 1; l >= 0; l--) {
        int in = ref_rnn_layer_input(r, l);
        double *din = calloc((size_t)r->T * r->N * in, sizeof(double));
        for (int d = 0; d < D; d++) {
            int pl = l * D + d;
            for (int n = 0; n < r->N; n++) {
                int len = r->lengths[n];
                double *dh = malloc(sizeof(double) * (size_t)P), *dc = malloc(sizeof(double) * (size_t)H);
                for (int j = 0; j < P; j++) dh[j] = dhy ? dhy[((int64_t)pl * r->N + n) * P + j] : 0;
                for (int j = 0; j < H; j++) dc[j] = dcy && r->mode == CUDNN_LSTM ? dcy[((int64_t)pl * r->N + n) * H + j] : 0;
                for (int st = len - 1; st >= 0; st--) {
                    int t = d ? len - 1 - st : st;
                    struct step s = step_at(&c, pl, t, n);
                    for (int j = 0; j < P; j++) dh[j] += dout[((int64_t)t * r->N + n) * D * P + d * P + j];
                    cell_backward(r, w, dw, l, pl, c.inputs[l] + ((int64_t)t * r->N + n) * in, &s, st == len - 1,
                                  dh, dc, din + ((int64_t)t * r->N + n) * in);
                }
                if (dhx) memcpy(dhx + ((int64_t)pl * r->N + n) * P, dh, sizeof(double) * (size_t)P);
                if (dcx && r->mode == CUDNN_LSTM) memcpy(dcx + ((int64_t)pl * r->N + n) * H, dc, sizeof(double) * (size_t)H);
                free(dh), free(dc);
            }
        }
        free(dout);
        dout = din;
    }
    if (dx) memcpy(dx, dout, sizeof(double) * (size_t)r->T * r->N * r->input);
    free(dout);
    cache_free(&c);
}
