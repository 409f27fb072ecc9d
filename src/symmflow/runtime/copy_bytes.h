// The runtime's one bulk copy, shared by collectives/ (chunk pushes, gathers)
// and p2p/ (mailbox and staged transfers), so it lives below both.
//
//   detail::copy_bytes(dst, src, n);         // no overlap; dst == src is a no-op
//   detail::copy_bytes_stream(dst, src, n);  // the same, non-temporal stores
#pragma once
#include <cstddef>

namespace symmflow::dist::detail {

// memcpy for bulk data (no overlap), with a vector loop instead of glibc's
// `rep movsb` (see the .cc for why).
void copy_bytes(void* dst, const void* src, size_t n);
// The same with non-temporal stores (for copies much larger than the cache,
// whose result is not read again soon).
void copy_bytes_stream(void* dst, const void* src, size_t n);

}  // namespace symmflow::dist::detail
