// A range of an open file as the body of a request: read in pieces as
// libcurl asks for them (HttpExchange::read_body), never held whole.
//
//   exchange.body_size = size;
//   exchange.read_body = FileRangeReader(fd, offset);
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace ruleplane {

// Reads `fd` from `offset` on with pread (the descriptor's position is left
// alone), as much as fits each call; 0 at the end of the file or on a read
// error (HttpClient::Exchange then ends the request: kIo). The caller keeps
// `fd` open while the request runs.
std::function<size_t(char* buffer, size_t size)> FileRangeReader(int fd, int64_t offset);

}  // namespace ruleplane
