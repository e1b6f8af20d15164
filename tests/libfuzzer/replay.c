/* replay.c: a main for the libFuzzer harness (ops.c) in a plain build (ctest libfuzzer_corpus):
   it feeds every file of the directories or files on its command line, in name order, to
   LLVMFuzzerTestOneInput, as a libFuzzer binary does with file arguments, so that each input of
   the committed corpus (tests/libfuzzer/corpus) is a regression test of every build, under the
   sanitizers where the build has them. A broken invariant aborts (ops.c), after the file's name
   was printed. */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Runs the harness on one file's bytes; false when it cannot be read. */
static bool replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) return false;
    size_t size = 0, cap = 4096;
    uint8_t *data = malloc(cap);
    for (size_t n; data != NULL && (n = fread(data + size, 1, cap - size, f)) > 0;) {
        size += n;
        if (size == cap) {
            uint8_t *more = realloc(data, cap *= 2);
            if (more == NULL) free(data);
            data = more;
        }
    }
    bool ok = data != NULL && !ferror(f);
    fclose(f);
    if (ok) {
        printf("%s (%zu bytes)\n", path, size);
        fflush(stdout);
        LLVMFuzzerTestOneInput(data, size);
    }
    free(data);
    return ok;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays a directory's files (not those whose name starts with a dot) in name order; the count,
   or -1 when it cannot be read. */
static int replay_dir(const char *dir, DIR *d)
{
    size_t count = 0, cap = 0;
    char **names = NULL;
    int done = 0;
    for (struct dirent *e; done == 0 && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        if (count == cap) {
            char **more = realloc(names, (cap = cap ? 2 * cap : 256) * sizeof *names);
            if (more == NULL) {
                done = -1;
                break;
            }
            names = more;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if ((names[count] = malloc(len)) == NULL) done = -1;
        else snprintf(names[count++], len, "%s/%s", dir, e->d_name);
    }
    qsort(names, count, sizeof *names, by_name);
    for (size_t i = 0; i < count; i++) {
        if (done >= 0) done = replay_file(names[i]) ? done + 1 : -1;
        free(names[i]);
    }
    free(names);
    return done;
}

int main(int argc, char **argv)
{
    LLVMFuzzerInitialize(&argc, &argv);
    int total = 0;
    for (int a = 1; a < argc; a++) {
        DIR *d = opendir(argv[a]);
        int n = d != NULL ? replay_dir(argv[a], d) : replay_file(argv[a]) ? 1 : -1;
        if (d != NULL) closedir(d);
        if (n < 0) {
            fprintf(stderr, "replay: cannot read %s\n", argv[a]);
            return 1;
        }
        total += n;
    }
    if (total == 0) {
        fprintf(stderr, "replay: no inputs\n");
        return 1;
    }
    printf("replayed %d inputs\n", total);
    return 0;
}
