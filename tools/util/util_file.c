/* util_file.c — opening the files a tool names without ever waiting on one (util_file.h). */
#include "util_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Contract in util_file.h. */
const char *util_file_kind(unsigned mode)
{
    mode_t m = (mode_t)mode;
    return S_ISDIR(m)    ? "a directory"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m) ? "a socket"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISLNK(m)  ? "a symbolic link"
                         : "not a regular file";
}

static FILE *refuse(int fd, mode_t mode, char *why, size_t whylen)
{
    if (fd >= 0)
        close(fd);
    snprintf(why, whylen, "%s, not a regular file", util_file_kind((unsigned)mode));
    errno = EINVAL;
    return NULL;
}

static FILE *fail(int fd, char *why, size_t whylen)
{
    int e = errno;
    if (fd >= 0)
        close(fd);
    snprintf(why, whylen, "%s", strerror(e));
    errno = e;
    return NULL;
}

/* Contract in util_file.h. */
FILE *util_file_open(const char *path, const char *mode, char *why, size_t whylen)
{
    int writing = mode[0] == 'w';
    int flags = (writing ? O_WRONLY | O_CREAT : O_RDONLY) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
    int fd = open(path, flags, 0666);
    struct stat st;
    if (fd < 0) {
        /* A FIFO opened for writing with no reader fails at once (ENXIO): say what it is. */
        if (errno == ENXIO && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
            return refuse(-1, st.st_mode, why, whylen);
        return fail(-1, why, whylen);
    }
    if (fstat(fd, &st) != 0)
        return fail(fd, why, whylen);
    if (!S_ISREG(st.st_mode))
        return refuse(fd, st.st_mode, why, whylen);
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 ||
        (writing && ftruncate(fd, 0) != 0))
        return fail(fd, why, whylen);
    FILE *f = fdopen(fd, writing ? "w" : "r");
    return f ? f : fail(fd, why, whylen);
}
