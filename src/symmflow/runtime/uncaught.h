// An error nobody caught ends a rank with its message and exit status 1, not
// with std::terminate's abort (exit 134 and no message): dist::init()
// installs the handler before anything it does can throw, so a program
// started without `symmflow launch` says how to start it and exits 1.
// The message goes to the launcher (dist::report_failure: printed once for
// all ranks that fail alike) or, with nothing to collect it, to stderr; the
// job's abort flag is raised so that peers fail at once.
#pragma once

namespace symmflow::dist::detail {

// Idempotent. Keeps a handler the program installed itself.
void install_uncaught_handler();

}  // namespace symmflow::dist::detail
