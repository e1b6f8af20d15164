/* bench.c: the benchmark's driver: parses the options, runs the selected cases (or --problem
   strings) on one handle, times them and prints one line each, with the implementations that
   served the case (see bench.h for the whole). */
#include "bench.h"

#include <unistd.h>

#include "host_peak.h"

/* Every op the problem strings can name, by family. */
static const struct op_family *const op_families[] = {&ops_tensor, &ops_conv, &ops_nn, &ops_adv, &ops_rnn, &ops_attn,
                                                      &ops_graph};


/* Whether keys (space-separated) are an op's key list: its required keys, then a leading run of
   its optional ones (written "[a b]" at the end of the list), in that order. */
static bool keys_match(const char *keys, const char *op_keys)
{
    const char *bracket = strchr(op_keys, '[');
    size_t required = bracket ? (size_t)(bracket - op_keys) : strlen(op_keys);
    while (required > 0 && op_keys[required - 1] == ' ') required--;
    if (strncmp(keys, op_keys, required) != 0) return false;
    const char *rest = keys + required, *opt = bracket ? bracket + 1 : "]";
    while (*rest == ' ') {
        rest++;
        size_t n = strcspn(rest, " "), m = strcspn(opt, " ]");
        if (n == 0 || n != m || strncmp(rest, opt, n) != 0) return false;
        rest += n, opt += m;
        while (*opt == ' ') opt++;
    }
    return *rest == '\0';
}

/* The op of a parsed problem, after checking that its keys are the op's, in the op's order. */
static const struct op *problem_op(const struct problem *p, const char **why)
{
    static char msg[640];
    const struct op *op = NULL;
    for (size_t f = 0; f < ARRAY_LEN(op_families) && op == NULL; f++)
        for (size_t i = 0; i < op_families[f]->nops && op == NULL; i++)
            if (strcmp(op_families[f]->ops[i].name, p->value[0]) == 0) op = &op_families[f]->ops[i];
    if (op != NULL) {
        char keys[256] = "";
        for (int k = 1; k < p->nkeys; k++) {
            strncat(keys, k > 1 ? " " : "", sizeof keys - strlen(keys) - 1);
            strncat(keys, p->key[k], sizeof keys - strlen(keys) - 1);
        }
        if (!keys_match(keys, op->keys)) {
            snprintf(msg, sizeof msg, "op=%s takes the keys '%s', in that order (got '%s')", op->name,
                     op->keys, keys);
            *why = msg;
            return NULL;
        }
        return op;
    }
    snprintf(msg, sizeof msg, "unknown op '%s'", p->value[0]);
    *why = msg;
    return NULL;
}

/* ---- running a case --------------------------------------------------------------------------- */

struct options {
    const char *suites; /* comma-separated suite names, NULL: all */
    const char *cases;  /* comma-separated substrings of case names, NULL: all */
    bool list, tsv, strict;
    int reps, iters; /* iters 0: chosen from min_ms */
    double min_ms;
};

struct result {
    const char *status; /* cudnnGetErrorString of the call, or why the case did not run */
    char impl[IMPL_NAMES_MAX]; /* the call's (struct call), "" when unknown */
    double ms;          /* per call (median), or -1 */
    double bytes;
    double flops; /* 0: not counted */
    double sum, norm; /* the checksum of the output (see the top of this file) */
};

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++) /* insertion sort: n is small */
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void checksum(const struct call *c, struct result *r)
{
    const struct tensor *t = &c->t[c->out];
    size_t bytes = (size_t)t->count * t->dt->size;
    char *host = malloc(bytes);
    if (host == NULL) die("out of host memory");
    mem_copy(host, t->data, bytes, false);
    uint64_t w_state = 42;
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < t->count; i++) {
        double w = (double)(splitmix(&w_state) >> 11) * 0x1p-52 - 1.0, v = w * decode(t->dt, host + i * t->dt->size);
        sum += v;
        sq += v * v;
    }
    free(host);
    r->sum = sum;
    r->norm = sqrt(sq);
}

/* Runs the call: first once to check status and output, then timed. Exits on a CUDA error:
   after one the device is in an unknown state and no later number would mean anything. The
   warm-up calls add the implementations that serve the case to c->impl; the timed ones run with
   the logging as it was. */
static void measure(struct call *c, const struct op *op, enum timing timing, const struct options *o,
                    struct result *r)
{
    cudnnStatus_t s = op->run(c);
    device_sync();
    r->status = cudnnGetErrorString(s);
    if (s != CUDNN_STATUS_SUCCESS) return;
    checksum(c, r);

    enum { MAX_SAMPLES = 1001 };
    double samples[MAX_SAMPLES];
    if (timing == TIME_HOST_CALL) {
        int n = o->iters > 0 ? o->iters : 1000;
        if (n > MAX_SAMPLES) n = MAX_SAMPLES;
        impl_watch_start(c);
        for (int i = 0; i < 10; i++) op->run(c); /* warm-up */
        impl_watch_end();
        for (int i = 0; i < n; i++) {
            device_sync();
            double t0 = host_ms();
            op->run(c);
            samples[i] = host_ms() - t0;
        }
        device_sync();
        r->ms = median(samples, n);
        return;
    }
    struct timer timer;
#ifdef BENCH_CUDA
    if (on_device) {
        CUDA_TRY(cudaEventCreate(&timer.start));
        CUDA_TRY(cudaEventCreate(&timer.stop));
    }
#endif
    impl_watch_start(c);
    for (int i = 0; i < 3; i++) op->run(c); /* warm-up */
    impl_watch_end();
    int n = o->iters;
    if (n <= 0) { /* as many calls as fill min_ms, from the time of one */
        timer_start(&timer);
        op->run(c);
        double one = timer_stop(&timer);
        n = one > 0 ? (int)ceil(o->min_ms / one) : 1000;
        n = n < 3 ? 3 : n > 10000 ? 10000 : n;
    }
    int reps = o->reps < 1 ? 1 : o->reps > MAX_SAMPLES ? MAX_SAMPLES : o->reps;
    for (int rep = 0; rep < reps; rep++) {
        timer_start(&timer);
        for (int i = 0; i < n; i++) op->run(c);
        samples[rep] = timer_stop(&timer) / n;
    }
    r->ms = median(samples, reps);
#ifdef BENCH_CUDA
    if (on_device) {
        CUDA_TRY(cudaEventDestroy(timer.start));
        CUDA_TRY(cudaEventDestroy(timer.stop));
    }
#endif
}

/* Sets up, measures and releases one case; r->status says why when it did not run. In a dry run
   (--list) only parses the problem and creates the descriptors. */
static void run_case(cudnnHandle_t handle, const char *name, enum timing timing, const char *text, bool dry,
                     const struct options *o, struct result *r)
{
    memset(r, 0, sizeof *r);
    r->ms = -1;
    struct problem p;
    const char *why = problem_parse(text, &p);
    const struct op *op = why ? NULL : problem_op(&p, &why);
    struct call c = {.handle = handle, .dry = dry, .rng = hash_string(name)};
    if (op != NULL && (c.dt = dtype_named(problem_get(&p, "dt"))) == NULL) why = "dt must be one of " DTYPE_NAMES;
    if (op != NULL && c.dt != NULL) why = op->setup(&c, &p);
    r->bytes = c.bytes;
    r->flops = c.flops;
    if (why != NULL) r->status = why;
    else if (!dry) measure(&c, op, timing, o, r);
    snprintf(r->impl, sizeof r->impl, "%s", c.impl);
    call_release(&c);
}

/* ---- output ---------------------------------------------------------------------------------------- */

static double gbps(const struct result *r)
{
    return r->ms > 0 ? r->bytes / (r->ms * 1e-3) / 1e9 : 0;
}

static double fma_peak; /* GFLOP/s, on the host backend only */

static void print_header(bool tsv)
{
    /* flops and impl come last, added after the others so that older readers still work. */
    if (tsv) printf("name\tsuite\ttiming\tstatus\tms\tbytes\tcheck\tproblem\tflops\timpl\n");
    else if (!on_device)
        printf("%-26s %10s %9s %6s %8s %6s  %s\n", "case", "ms", "GB/s", "%copy", "GFLOP/s", "%peak", "problem");
    else printf("%-26s %10s %9s %6s %8s  %s\n", "case", "ms", "GB/s", "%copy", "TFLOP/s", "problem");
}

static void print_result(const char *suite, const char *name, enum timing timing, const char *problem,
                         const struct result *r, double ceiling, bool tsv)
{
    char by[300] = ""; /* the implementations, after the problem */
    if (r->impl[0]) snprintf(by, sizeof by, "  [%s]", r->impl);
    if (tsv) {
        printf("%s\t%s\t%s\t%s\t%.6g\t%.0f\t%.9g,%.9g\t%s\t%.0f\t%s\n", name, suite,
               timing == TIME_DEVICE ? "device" : "host", r->status, r->ms, r->bytes, r->sum, r->norm, problem,
               r->flops, r->impl[0] ? r->impl : "-");
    } else if (r->ms < 0) {
        printf("%-26s %10s %9s %6s %8s  %s: %s\n", name, "-", "-", "-", "-", r->status, problem);
    } else if (timing == TIME_HOST_CALL) {
        printf("%-26s %10.5f %9s %6s %8s  %s (host time per call)%s\n", name, r->ms, "-", "-", "-", problem, by);
    } else if (!on_device) {
        char pct[16] = "-", gflops[16] = "-", peak[16] = "-";
        double g = r->flops / (r->ms * 1e-3) / 1e9;
        if (ceiling > 0) snprintf(pct, sizeof pct, "%.0f%%", 100 * gbps(r) / ceiling);
        if (r->flops > 0) snprintf(gflops, sizeof gflops, "%.1f", g);
        if (r->flops > 0 && fma_peak > 0) snprintf(peak, sizeof peak, "%.0f%%", 100 * g / fma_peak);
        printf("%-26s %10.4f %9.1f %6s %8s %6s  %s%s\n", name, r->ms, gbps(r), pct, gflops, peak, problem, by);
    } else {
        char pct[16] = "-", tflops[16] = "-";
        if (ceiling > 0) snprintf(pct, sizeof pct, "%.0f%%", 100 * gbps(r) / ceiling);
        if (r->flops > 0) snprintf(tflops, sizeof tflops, "%.2f", r->flops / (r->ms * 1e-3) / 1e12);
        printf("%-26s %10.4f %9.1f %6s %8s  %s%s\n", name, r->ms, gbps(r), pct, tflops, problem, by);
    }
    fflush(stdout);
}

/* true when `name` is in the comma-separated `list` (exactly, for suites) or contains one of its
   items (for cases); a NULL list takes everything. */
static bool selected(const char *list, const char *name, bool exact)
{
    if (list == NULL) return true;
    for (const char *s = list; *s;) {
        size_t len = strcspn(s, ",");
        if (len > 0) {
            char item[128];
            snprintf(item, sizeof item, "%.*s", (int)len, s);
            if (exact ? strcmp(name, item) == 0 : strstr(name, item) != NULL) return true;
        }
        s += len + (s[len] == ',');
    }
    return false;
}

/* --replay: the problem strings of a library log (CUDNN_LOGINFO_DBG=1), which names each described
   call as `replay: opencudnn_bench --problem "<string>"`; each distinct string once, in order. */
static int read_replay(const char *path, const char **problems, int nproblems, int cap)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) die("--replay: cannot open %s", path);
    char line[4096];
    static const char mark[] = "replay: opencudnn_bench --problem \"";
    while (fgets(line, sizeof line, f) != NULL && nproblems < cap) {
        char *at = strstr(line, mark);
        if (at == NULL) continue;
        at += sizeof mark - 1;
        char *end = strchr(at, '"');
        if (end == NULL) continue;
        *end = '\0';
        bool seen = false;
        for (int i = 0; i < nproblems && !seen; i++) seen = strcmp(problems[i], at) == 0;
        static char kept[64][512];
        if (!seen && nproblems < 64 && strlen(at) < sizeof kept[0]) {
            snprintf(kept[nproblems], sizeof kept[0], "%s", at);
            problems[nproblems] = kept[nproblems];
            nproblems++;
        }
    }
    fclose(f);
    return nproblems;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--suite S[,S]] [--case SUBSTR[,SUBSTR]] [--problem STRING]... [--replay LOG]\n"
            "          [--latency]\n"
            "          [--list] [--tsv] [--reps N] [--iters N] [--min-ms MS] [--strict]\n"
            "  --suite    run only these suites (--list shows them)\n"
            "  --case     run only cases whose name contains one of these\n"
            "  --problem  run this problem string instead of the tables (repeatable); --latency times\n"
            "             it as host time per call instead of device time\n"
            "  --replay   run the calls a library log names (CUDNN_LOGINFO_DBG=1: each described call's\n"
            "             problem string, each distinct one once), as --problem does, with fresh random data\n"
            "  --list     print every case with its problem string (each is parsed and its descriptors\n"
            "             created, which checks the tables without running anything)\n"
            "  --tsv      one tab-separated line per case, for bench/run.sh (its last column, impl,\n"
            "             names the implementations of ours that served the case)\n"
            "  --reps     timed batches per case (median reported; default 5)\n"
            "  --iters    calls per batch (default: enough for --min-ms, default 20 ms)\n"
            "  --strict   exit 1 unless every case returned CUDNN_STATUS_SUCCESS\n"
            "Environment: OPENCUDNN_BACKEND=host|cuda picks opencudnn's backend (and where the benchmark\n"
            "puts its data).\n",
            argv0);
    exit(2);
}

static void print_banner(void)
{
    char device[320] = "host";
#ifdef BENCH_CUDA
    if (on_device) {
        struct cudaDeviceProp prop;
        int dev = 0;
        CUDA_TRY(cudaGetDevice(&dev));
        CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
        snprintf(device, sizeof device, "%s (sm_%d%d, %d SMs)", prop.name, prop.major, prop.minor,
                 prop.multiProcessorCount);
    }
#endif
#ifdef BENCH_VENDOR
    const char *build = "vendor";
#else
    const char *build = "opencudnn";
#endif
    /* one line: bench/run.sh takes it as the run's description */
    printf("# %s: cuDNN %zu (headers %d), CUDA runtime %zu, data on %s", build, cudnnGetVersion(), CUDNN_VERSION,
           cudnnGetCudartVersion(), device);
    if (!on_device && fma_peak > 0)
        printf(", fp32 FMA peak %.1f GFLOP/s (%ld processors x /proc/cpuinfo clock x 32 flops per cycle)", fma_peak,
               sysconf(_SC_NPROCESSORS_ONLN));
#ifndef BENCH_VENDOR
    /* the switches that change which of our entries serve (core/impl.c reads them) */
    const char *unproven = getenv("OPENCUDNN_UNPROVEN"), *disabled = getenv("OPENCUDNN_DISABLE");
    if (unproven != NULL && strcmp(unproven, "1") == 0) printf(", OPENCUDNN_UNPROVEN=1");
    if (disabled != NULL && disabled[0] != '\0') printf(", OPENCUDNN_DISABLE=%s", disabled);
#endif
    printf("\n");
}

int main(int argc, char **argv)
{
    struct options o = {.reps = 5, .min_ms = 20};
    const char *problems[64];
    int nproblems = 0;
    bool latency = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--suite") == 0 && v) o.suites = argv[++i];
        else if (strcmp(a, "--case") == 0 && v) o.cases = argv[++i];
        else if (strcmp(a, "--problem") == 0 && v && nproblems < 64) problems[nproblems++] = argv[++i];
        else if (strcmp(a, "--replay") == 0 && v) nproblems = read_replay(argv[++i], problems, nproblems, 64);
        else if (strcmp(a, "--reps") == 0 && v) o.reps = atoi(argv[++i]);
        else if (strcmp(a, "--iters") == 0 && v) o.iters = atoi(argv[++i]);
        else if (strcmp(a, "--min-ms") == 0 && v) o.min_ms = atof(argv[++i]);
        else if (strcmp(a, "--latency") == 0) latency = true;
        else if (strcmp(a, "--list") == 0) o.list = true;
        else if (strcmp(a, "--tsv") == 0) o.tsv = true;
        else if (strcmp(a, "--strict") == 0) o.strict = true;
        else usage(argv[0]);
    }
    cudnnHandle_t handle = open_backend();
    if (!on_device) fma_peak = host_fma_peak();
    print_banner();

    int bad = 0, ran = 0;
    struct result r;
    if (o.list) {
        for (size_t si = 0; si < nsuites; si++)
            for (size_t ci = 0; ci < suites[si].ncases; ci++) {
                const struct bench_case *bc = &suites[si].cases[ci];
                run_case(handle, bc->name, bc->timing, bc->problem, true, &o, &r);
                printf("%-13s %-28s %-6s %s%s%s\n", suites[si].name, bc->name,
                       bc->timing == TIME_DEVICE ? "device" : "host", bc->problem, r.status ? "  ERROR: " : "",
                       r.status ? r.status : "");
                bad += r.status != NULL;
            }
    } else {
        print_header(o.tsv);
        /* The ceiling comes first, whatever the filters, when the tables run: every GB/s figure
           is read against it. (--problem runs only what it is given: add op=copy to compare.) */
        double ceiling = 0;
        if (nproblems == 0) {
            const struct bench_case *cc = &ceiling_cases[0];
            run_case(handle, cc->name, cc->timing, cc->problem, false, &o, &r);
            if (r.ms > 0) ceiling = gbps(&r);
            print_result("ceiling", cc->name, cc->timing, cc->problem, &r, ceiling, o.tsv);
        }
        for (int i = 0; i < nproblems; i++) {
            char name[32];
            snprintf(name, sizeof name, "problem%d", i + 1);
            enum timing timing = latency ? TIME_HOST_CALL : TIME_DEVICE;
            run_case(handle, name, timing, problems[i], false, &o, &r);
            print_result("problem", name, timing, problems[i], &r, ceiling, o.tsv);
            ran++;
            bad += strcmp(r.status, "CUDNN_STATUS_SUCCESS") != 0;
        }
        for (size_t si = 0; nproblems == 0 && si < nsuites; si++) {
            if (suites[si].cases == ceiling_cases || !selected(o.suites, suites[si].name, true)) continue;
            for (size_t ci = 0; ci < suites[si].ncases; ci++) {
                const struct bench_case *bc = &suites[si].cases[ci];
                if (!selected(o.cases, bc->name, false)) continue;
                run_case(handle, bc->name, bc->timing, bc->problem, false, &o, &r);
                print_result(suites[si].name, bc->name, bc->timing, bc->problem, &r, ceiling, o.tsv);
                ran++;
                bad += strcmp(r.status, "CUDNN_STATUS_SUCCESS") != 0;
            }
        }
        if (ran == 0) fprintf(stderr, "bench: no case matches the filters\n");
    }
    close_backend(handle);
    if (o.list) return bad ? 1 : 0;
    return (o.strict && bad) || ran == 0 ? 1 : 0;
}
