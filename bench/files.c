/* The small-files workload of bench/run: N files created and written, read back, then
 * deleted, in the current directory. Under fence run each create and each unlink is a
 * notified call (2 N notifications); the reads are not notified. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    char name[64], data[512], back[512];
    memset(data, 'x', sizeof data);
    if (mkdir("files", 0755) != 0) { perror("mkdir files"); return 1; }
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "files/f%06d", i);
        int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, data, sizeof data) != (ssize_t)sizeof data) { perror(name); return 1; }
        close(fd);
    }
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "files/f%06d", i);
        int fd = open(name, O_RDONLY);
        if (fd < 0 || read(fd, back, sizeof back) != (ssize_t)sizeof back) { perror(name); return 1; }
        close(fd);
    }
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "files/f%06d", i);
        if (unlink(name) != 0) { perror(name); return 1; }
    }
    if (rmdir("files") != 0) { perror("rmdir files"); return 1; }
    return 0;
}
