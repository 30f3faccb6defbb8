/* Cost of one notified call: N opens with O_WRONLY of an existing file in the current
 * directory (each one is a seccomp notification under fence run), timed in-process. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    int fd = open("notify-cost.tmp", O_WRONLY | O_CREAT, 0644);
    if (fd < 0) { perror("open"); return 1; }
    close(fd);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) {
        fd = open("notify-cost.tmp", O_WRONLY);
        if (fd < 0) { perror("open"); return 1; }
        close(fd);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double us = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / n;
    printf("%.2f\n", us);
    unlink("notify-cost.tmp");
    return 0;
}
