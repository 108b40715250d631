#pragma once
// File system calls of the sweep's output directory, each failure a UserError naming the file
// and the system's reason ("out/journal.jsonl: cannot write (No space left on device)").
#include <string>

namespace tessera::sweep::file_io {

// errno's text for `path`, as a UserError: "PATH: WHAT (REASON)".
[[noreturn]] void fail(const std::string& path, const std::string& what, int error_number);

// YAML nodes take many times their text (yaml-cpp keeps every scalar, mark and node apart).
inline constexpr double kSpecBytesPerByte = 64;

// The whole file; UserError when it cannot be read or would not fit in the memory limit
// (`bytes_per_byte`: what the caller builds per byte of text).
std::string read_text(const std::string& path, const std::string& what, double bytes_per_byte);

// Writes all of `data` to `fd` (retrying short writes and EINTR). On failure returns the errno
// and leaves the file as the partial write left it; 0 on success.
int write_all(int fd, const std::string& data);

// fsync of the directory holding `path`, so that a file created or renamed there survives a
// machine crash. Best effort: some file systems refuse fsync on a directory.
void sync_directory_of(const std::string& path);

}  // namespace tessera::sweep::file_io
