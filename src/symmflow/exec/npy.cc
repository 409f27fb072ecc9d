// write_npy/read_npy (see npy.h): plain POSIX I/O around npy_header.cc, so every
// failure can name the file and the errno text. Usage: write_npy("o.npy", t).
#include "symmflow/exec/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <vector>

#include "symmflow/core/error.h"
#include "symmflow/core/printable.h"
#include "symmflow/exec/npy_header.h"
#include "symmflow/kernels/loops.h"

namespace symmflow::exec {

// '<' files are copied to and from memory as they are.
static_assert(std::endian::native == std::endian::little,
              "npy.cc reads and writes little-endian .npy files with plain copies");

namespace {

// Closes on scope exit, so every error path releases the descriptor.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Copies the elements of a (shape, src_strides) view into dst, densely in
// row-major order: for_each_run visits elements in that order.
void gather(const Shape& shape, DType dtype, char* dst, const char* src,
            std::vector<int64_t> src_byte_strides) {
  std::vector<int64_t> dst_strides = contiguous_strides(shape);
  for (auto& s : dst_strides) s *= int64_t(element_size(dtype));
  std::array<char*, 2> base{dst, const_cast<char*>(src)};
  std::array<std::vector<int64_t>, 2> strides{std::move(dst_strides), std::move(src_byte_strides)};
  SF_DISPATCH(dtype, {
    kernels::for_each_run<2>(shape, base, strides, [](char** p, const int64_t* s, int64_t n) {
      char* d = p[0];
      const char* q = p[1];
      for (int64_t i = 0; i < n; ++i, d += s[0], q += s[1]) std::memcpy(d, q, sizeof(T));
    });
  });
}

// Reads until n bytes or end of file; returns how many were read.
size_t read_full(int fd, char* p, size_t n, const std::string& path) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    SF_CHECK(r >= 0, "read_npy {}: read failed: {}", path, std::strerror(errno));
    if (r == 0) break;
    got += size_t(r);
  }
  return got;
}

void write_full(int fd, const char* p, size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    SF_CHECK(w > 0, "write_npy {}: write failed: {}", path, std::strerror(w < 0 ? errno : EIO));
    p += w;
    n -= size_t(w);
  }
}

std::atomic<uint64_t> g_tmp_counter{0};

}  // namespace

void write_npy(const std::string& path, const Tensor& t) {
  SF_CHECK(t.defined(), "write_npy {}: the tensor is undefined", path);
  SF_CHECK(!t.is_meta(), "write_npy {}: {} is a meta tensor, it has no data to write", path,
           t.type_string());
  const std::string pre = npy_preamble({npy_descr(t.dtype()), false, t.sizes()});
  std::vector<char> gathered;
  const char* data = nullptr;
  if (t.numel() > 0) {
    if (t.is_contiguous()) {
      data = static_cast<const char*>(t.data_ptr());
    } else {
      gathered.resize(t.nbytes());
      gather(t.sizes(), t.dtype(), gathered.data(), static_cast<const char*>(t.data_ptr()),
             kernels::byte_strides(t));
      data = gathered.data();
    }
  }
  // Unique per process and call: ranks may be threads of one process.
  const std::string tmp = fmt::format("{}.tmp{}.{}", path, ::getpid(), g_tmp_counter++);
  Fd fd{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)};
  SF_CHECK(fd.fd >= 0, "write_npy {}: cannot create the temporary file {}: {}", path, tmp,
           std::strerror(errno));
  try {
    write_full(fd.fd, pre.data(), pre.size(), path);
    write_full(fd.fd, data, t.nbytes(), path);
    const int rc = ::close(fd.fd);
    fd.fd = -1;
    SF_CHECK(rc == 0, "write_npy {}: close failed: {}", path, std::strerror(errno));
    SF_CHECK(::rename(tmp.c_str(), path.c_str()) == 0, "write_npy {}: rename from {} failed: {}",
             path, tmp, std::strerror(errno));
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
}

Tensor read_npy(const std::string& path, std::optional<DType> expect) {
  Fd fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  SF_CHECK(fd.fd >= 0, "read_npy {}: cannot open: {}", path, std::strerror(errno));
  struct stat st;
  SF_CHECK(::fstat(fd.fd, &st) == 0, "read_npy {}: stat failed: {}", path, std::strerror(errno));
  SF_CHECK(S_ISREG(st.st_mode), "read_npy {}: expected a regular file", path);
  const uint64_t file_size = uint64_t(st.st_size);

  // Magic (6), version (2), header length (2 bytes in 1.0, 4 in 2.0 and 3.0).
  char pre[12];
  size_t n = read_full(fd.fd, pre, 10, path);
  const size_t m = std::min<size_t>(n, 6);  // a shorter file is reported as truncated
  SF_CHECK(std::string_view(pre, m) == kNpyMagic.substr(0, m),
           "read_npy {}: not a .npy file: expected the magic \\x93NUMPY, found '{}'", path,
           printable(std::string_view(pre, m)));
  SF_CHECK(n == 10, "read_npy {}: truncated: the file has {} bytes, a .npy preamble has 10", path,
           n);
  const int major = static_cast<unsigned char>(pre[6]), minor = static_cast<unsigned char>(pre[7]);
  SF_CHECK(major >= 1 && major <= 3 && minor == 0,
           "read_npy {}: unsupported .npy format version {}.{} (expected 1.0, 2.0 or 3.0)", path,
           major, minor);
  size_t prefix = 10;
  if (major >= 2) {
    SF_CHECK(read_full(fd.fd, pre + 10, 2, path) == 2,
             "read_npy {}: truncated: the file ends inside the version {}.0 preamble", path, major);
    prefix = 12;
  }
  uint64_t hlen = 0;
  for (size_t b = 8; b < prefix; ++b)
    hlen |= uint64_t(static_cast<unsigned char>(pre[b])) << (8 * (b - 8));
  SF_CHECK(prefix + hlen <= file_size,
           "read_npy {}: truncated header: expected {} header bytes after the {}-byte preamble, "
           "the file has {}",
           path, hlen, prefix, file_size - prefix);
  std::string text(hlen, '\0');
  SF_CHECK(read_full(fd.fd, text.data(), hlen, path) == hlen,
           "read_npy {}: truncated header (the file shrank while being read)", path);

  NpyHeader h = parse_npy_dict(text, path);
  const DType dtype = dtype_from_npy_descr(h.descr, expect, path);
  const std::string type = fmt::format("{}{}", dtype_name(dtype), shape_to_string(h.shape));
  uint64_t nbytes = 0;
  try {
    nbytes = uint64_t(nbytes_of(h.shape, element_size(dtype)));  // the cap on every tensor
  } catch (const Error& e) {
    fail("read_npy {}: shape {} is too large: {}", path, npy_shape_repr(h.shape), e.what());
  }
  const uint64_t avail = file_size - prefix - hlen;
  SF_CHECK(avail >= nbytes,
           "read_npy {}: truncated data: {} needs {} bytes after the header, the file has {}", path,
           type, nbytes, avail);
  SF_CHECK(avail == nbytes,
           "read_npy {}: size mismatch: {} needs {} bytes after the header, the file has {} "
           "({} bytes too many)",
           path, type, nbytes, avail, avail - nbytes);

  Tensor out = Tensor::empty(h.shape, dtype);
  if (nbytes == 0) return out;
  char* dst = static_cast<char*>(out.data_ptr());
  // Fortran order with more than one dimension is stored column-major: read it
  // aside and reorder (a 0-d or 1-d array is the same in both orders).
  std::vector<char> fortran;
  char* into = dst;
  if (h.fortran_order && h.shape.size() > 1) {
    fortran.resize(nbytes);
    into = fortran.data();
  }
  SF_CHECK(read_full(fd.fd, into, nbytes, path) == nbytes,
           "read_npy {}: truncated data (the file shrank while being read)", path);
  if (!fortran.empty()) {
    std::vector<int64_t> strides(h.shape.size());
    int64_t s = int64_t(element_size(dtype));
    for (size_t d = 0; d < h.shape.size(); ++d) {
      strides[d] = s;
      s *= h.shape[d];
    }
    gather(h.shape, dtype, dst, fortran.data(), std::move(strides));
  }
  // A bool must be 0 or 1 in memory; numpy reads any nonzero byte as True.
  if (dtype == DType::boolean)
    for (uint64_t i = 0; i < nbytes; ++i) dst[i] = dst[i] != 0;
  return out;
}

}  // namespace symmflow::exec
