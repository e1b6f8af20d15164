/* conv_reach.c: see conv_reach.h. */
#include "conv_reach.h"

#include <stdlib.h>
#include <string.h>

bool cublas_loadable(void)
{
    static const char *const names[] = {"libcublas.so.13", "libcublas.so", "libcublas.so.12", "libcublas.so.11"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *lib = ocd_dl_open(names[i], NULL, 0);
        if (lib) {
            ocd_dl_close(lib);
            return true;
        }
    }
    return false;
}

void check_entry_reached(const struct shape *sh, const struct config *cf, enum dir d, int algo, const char *prefix,
                         const char *disable)
{
    struct problem p;
    if (!make_problem(&p, sh, cf, 0)) {
        free_problem(&p);
        return;
    }
    long nx = ref_conv_x_count(&p.r), nw = ref_conv_w_count(&p.r), ny = ref_conv_y_count(&p.r);
    /* unsigned data over its whole range: bytes of 128 and more must count as unsigned */
    const bool u8 = p.cf->x == CUDNN_DATA_UINT8 || p.cf->x == CUDNN_DATA_UINT8x4;
    double *x = random_values(p.cf->x, nx, u8 ? 0 : -1, u8 ? 255 : 1), *w = random_values(p.cf->w, nw, -1, 1);
    double *y = random_values(p.cf->y, ny, -1, 1);
    void *dx = tview_upload(&p.x, x), *dw = tview_upload(&p.w.v, w), *dy = tview_upload(&p.y, y);
    const struct disable_list saved = disable_saved();
    if (disable) ocd_setenv("OPENCUDNN_DISABLE", disable);
    size_t ws_bytes = 0;
    CHECK_OK(workspace_size(&p, d, algo, &ws_bytes));
    void *ws = ws_bytes ? tbuf_alloc(ws_bytes) : NULL;
    struct ran_impl r;
    CHECK_OK(execute_capturing(&p, d, algo, dx, dw, dy, ws, ws_bytes, &r));
    if (disable) disable_restore(&saved);
    if (!CHECK(strncmp(r.name, prefix, strlen(prefix)) == 0))
        printf("      (%s %s dir %d algo %d: ran \"%s\", expected %s...)\n", sh->name, cf->name, (int)d, algo, r.name,
               prefix);
    /* and what it computed */
    long ndst = d == FWD ? ny : d == BWD_DATA ? nx : nw;
    double *want = malloc(sizeof *want * (size_t)ndst);
    double *got = malloc(sizeof *got * (size_t)ndst);
    if (d == FWD) ref_conv_fwd(&p.r, x, w, want), tview_download(&p.y, dy, got);
    else if (d == BWD_DATA) ref_conv_bwd_data(&p.r, y, w, want), tview_download(&p.x, dx, got);
    else ref_conv_bwd_filter(&p.r, x, y, want), tview_download(&p.w.v, dw, got);
    cudnnDataType_t dst_type = d == FWD ? p.cf->y : d == BWD_DATA ? p.cf->x : p.cf->w;
    /* an integer destination holds the sum saturated (UINT8_CONFIG's y: negative sums are 0) */
    for (long e = 0; e < ndst; e++) want[e] = saturate_for(dst_type, want[e]);
    cudnnMathType_t math = strstr(r.name, "_tc") || strstr(r.name, "_tf32") || strstr(r.name, "_wgmma") || strstr(r.name, "_tma") ||
                                       strstr(r.name, "_gather")
                               ? CUDNN_TENSOR_OP_MATH
                               : CUDNN_FMA_MATH;
    tcompare(CUDNN_DATA_DOUBLE, got, want, ndst, tconv_tolerance(p.cf->x, dst_type, math), r.name);
    free(want), free(got);
    if (ws) tbuf_free(ws);
    tbuf_free(dx), tbuf_free(dw), tbuf_free(dy);
    free(x), free(w), free(y);
    free_problem(&p);
}

void check_entries_blended(const struct entry_case *cases, size_t n, enum dir d, int algo)
{
    check_entries_reached(cases, n, d, algo);
    for (size_t i = 0; i < n; i++) {
        struct problem p;
        char label[96];
        snprintf(label, sizeof label, "dir %d %s %s", (int)d, cases[i].sh->name, cases[i].cf->name);
        const struct disable_list saved = disable_saved();
        if (cases[i].disable) ocd_setenv("OPENCUDNN_DISABLE", cases[i].disable);
        if (make_problem(&p, cases[i].sh, cases[i].cf, 0)) check_direction(&p, d, algo, label);
        if (cases[i].disable) disable_restore(&saved);
        free_problem(&p);
    }
}

bool on_hopper(const char *kind)
{
    const int cc = test_compute_capability();
    if (cc != 90) printf("      (sm_%d: the %s entries need compute capability 9.0)\n", cc, kind);
    return cc == 90;
}

#define F CUDNN_DATA_FLOAT
const struct config tf32_nchw = {"float_nchw_tf32", F, F, F, F, CUDNN_DEFAULT_MATH, TV_NCHW, true};
#undef F

void check_entries_reached(const struct entry_case *cases, size_t n, enum dir d, int algo)
{
    for (size_t i = 0; i < n; i++) check_entry_reached(cases[i].sh, cases[i].cf, d, algo, cases[i].prefix, cases[i].disable);
}

int staged_batch(int c, int h, int w, int esize)
{
    const size_t image = (size_t)c * h * w * esize, want = test_l2_bytes() / 4 * 3;
    return (int)((want + image - 1) / image);
}
