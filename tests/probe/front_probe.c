/* front_probe.c: a program that links nothing of opencudnn. It loads DIR/libcudnn.so.8 and makes
   one API call through it, exiting with the status the call returned (200: the front itself did
   not load). The loading tests (tests/loading.c) run it against incomplete copies of the build.

   Usage: front_probe DIR create | front_probe DIR <name of a void VersionCheck function> */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*create_fn)(void **handle);
typedef int (*check_fn)(void);

int main(int argc, char **argv)
{
    if (argc != 3) return 201;
    char path[4096];
    snprintf(path, sizeof path, "%s/libcudnn.so.8", argv[1]);
    void *front = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (front == NULL) {
        fprintf(stderr, "front_probe: %s\n", dlerror());
        return 200;
    }
    if (strcmp(argv[2], "create") == 0) {
        void *handle = NULL;
        create_fn create = (create_fn)dlsym(front, "cudnnCreate");
        return create(&handle);
    }
    check_fn check = (check_fn)dlsym(front, argv[2]);
    if (check == NULL) return 202;
    check();
    return check(); /* a second call: the failure message must not be printed again */
}
