/* loading.c: the front library (libcudnn.so.8) and the list of functions not implemented yet.

   The loading tests copy the built libraries into a scratch directory, leave one out, and run a
   child process that loads libcudnn.so.8 from there and makes a call: the call must return
   CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING and stderr must hold the one clear message the
   DESIGN asks for (file wanted, places tried, loader error, missing dependency). The child is
   tests/probe/front_probe, which links nothing of ours, so no library is loaded before it asks.
   They fork, so they are POSIX's: on Windows tests/check_windows.py runs the same probe under
   Wine against copies of the DLLs with one left out. */
#include "test.h"
#include "unimplemented_calls.h"

#include <stdlib.h>
#include <string.h>
#if !defined(_WIN32)
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

TEST_ONCE(unimplemented_functions_say_not_supported)
{
    int n = 0;
    for (const struct unimplemented_call *c = unimplemented_calls; c->name; c++, n++) {
        cudnnStatus_t s = c->call();
        if (s != CUDNN_STATUS_NOT_SUPPORTED)
            FAIL("%s returned %s, expected CUDNN_STATUS_NOT_SUPPORTED", c->name, cudnnGetErrorString(s));
    }
    printf("    %d functions listed in api/unimplemented.txt\n", n);
}

#if !defined(_WIN32)
static const char *const libs[] = {"libcudnn.so.8", "libcudnn_ops_infer.so.8", "libcudnn_ops_train.so.8",
                                   "libcudnn_cnn_infer.so.8", "libcudnn_cnn_train.so.8",
                                   "libcudnn_adv_infer.so.8", "libcudnn_adv_train.so.8"};

static bool copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    bool ok = in && out;
    char buf[1 << 16];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    if (in) fclose(in);
    if (out) fclose(out);
    return ok;
}

/* Runs `call` in a child that loads libcudnn.so.8 from a copy of the build with `omit` left out.
   Returns the status the call returned and stores the child's stderr in err. */
static int run_without(const char *omit, const char *call, char *err, size_t errsize)
{
    char dir[] = "/tmp/ocd_loading_XXXXXX";
    if (mkdtemp(dir) == NULL) return -1;
    char from[1024], to[1024], errfile[1024];
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        if (strcmp(libs[i], omit) == 0) continue;
        snprintf(from, sizeof from, "%s/%s", OCD_LIB_DIR, libs[i]);
        snprintf(to, sizeof to, "%s/%s", dir, libs[i]);
        if (!copy_file(from, to)) FAIL("cannot copy %s", from);
    }
    snprintf(errfile, sizeof errfile, "%s/stderr.txt", dir);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 2);
        unsetenv("LD_LIBRARY_PATH");
        execl(OCD_PROBE_PATH, OCD_PROBE_PATH, dir, call, (char *)NULL);
        _exit(203);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    FILE *f = fopen(errfile, "r");
    size_t n = f ? fread(err, 1, errsize - 1, f) : 0;
    err[n] = '\0';
    if (f) fclose(f);
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        snprintf(to, sizeof to, "%s/%s", dir, libs[i]);
        unlink(to);
    }
    unlink(errfile);
    rmdir(dir);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++) n++;
    return n;
}

TEST_ONCE(front_reports_a_missing_sublibrary)
{
    char err[4096];
    int status = run_without("libcudnn_ops_infer.so.8", "create", err, sizeof err);
    CHECK(status == CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING);
    CHECK(strstr(err, "cannot load libcudnn_ops_infer.so.8") != NULL);
    CHECK(strstr(err, "/tmp/ocd_loading_") != NULL);       /* the directory it tried first */
    CHECK(strstr(err, "loader's search path") != NULL);     /* and the loader's search */
    CHECK(strstr(err, "No such file") != NULL);             /* the loader's own error */
    if (current_test_failed()) printf("    child stderr:\n%s\n", err);
}

TEST_ONCE(front_names_the_missing_dependency_once)
{
    char err[4096];
    /* cnn_infer is there, but ops_infer, which it needs, is not */
    int status = run_without("libcudnn_ops_infer.so.8", "cudnnCnnInferVersionCheck", err, sizeof err);
    CHECK(status == CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING);
    CHECK(strstr(err, "cannot load libcudnn_cnn_infer.so.8") != NULL);
    CHECK(strstr(err, "cannot be loaded: libcudnn_ops_infer.so.8") != NULL);
    CHECK(count(err, "cannot load") == 1);
    if (current_test_failed()) printf("    child stderr:\n%s\n", err);
}

TEST_ONCE(front_loads_a_complete_copy)
{
    char err[4096];
    int status = run_without("none", "cudnnAdvTrainVersionCheck", err, sizeof err);
    CHECK(status == CUDNN_STATUS_SUCCESS);
    CHECK(err[0] == '\0');
}
#endif
