/* util_file.h — the util room's file opener (tools/util/): every path a tool reads or writes is
 * opened through it, so that a FIFO, a device, a socket or a directory named where a file is
 * expected is refused at once rather than waited on.
 *
 * Who may include it: every room of tools/ and their tests. It includes nothing from tools/ and
 * nothing else from the project.
 */
#ifndef UTIL_FILE_H
#define UTIL_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Opens path as a stream for reading (mode "r" or "rb") or writing (mode "w" or "wb": created
   with mode 0666 less the umask, else truncated), never waiting on it: the open is non-blocking
   and the descriptor itself is checked (fstat), so nothing can swap the file between a check
   and the open. Anything but a regular file is refused and left as it was (a FIFO is neither
   read nor written, a device is not truncated). Returns the stream, or NULL with why it failed
   written into why (NUL-terminated, at most whylen bytes): the system's reason ("No such file or
   directory"), or "a FIFO, not a regular file" and the like. errno is then that of the system's
   reason, or EINVAL for a file that is not a regular one. */
FILE *util_file_open(const char *path, const char *mode, char *why, size_t whylen);

/* The name of the kind of file mode is, for messages: "a FIFO", "a directory", "a socket", "a
   character device", "a block device", "a symbolic link", or "not a regular file". Never fails. */
const char *util_file_kind(unsigned mode);

#endif
