/* front_probe.c: a program that links nothing of opencudnn's libraries. It loads the front
   (DIR/libcudnn.so.8, DIR\cudnn64_8.dll on Windows) and makes one API call through it, exiting
   with the status the call returned (200: the front itself did not load). The loading tests
   (tests/loading.c, and tests/check_windows.py under Wine) run it against incomplete copies of
   the build. It compiles core/platform.c for the loader calls.

   Usage: front_probe DIR create | front_probe DIR <name of a void VersionCheck function> */
#include "core/platform.h"

#include <stdio.h>
#include <string.h>

typedef int (*create_fn)(void **handle);
typedef int (*check_fn)(void);

int main(int argc, char **argv)
{
    if (argc != 3) return 201;
    char path[4096], err[1024];
    snprintf(path, sizeof path, "%s/%s", argv[1], OCD_LIBRARY_FILE("cudnn"));
    void *front = ocd_dl_open(path, err, sizeof err);
    if (front == NULL) {
        fprintf(stderr, "front_probe: %s\n", err);
        return 200;
    }
    void *fn = ocd_dl_symbol(front, strcmp(argv[2], "create") == 0 ? "cudnnCreate" : argv[2]);
    if (fn == NULL) return 202;
    if (strcmp(argv[2], "create") == 0) {
        create_fn create;
        memcpy(&create, &fn, sizeof create);
        void *handle = NULL;
        return create(&handle);
    }
    check_fn check;
    memcpy(&check, &fn, sizeof check);
    check();
    return check(); /* a second call: the failure message must not be printed again */
}
