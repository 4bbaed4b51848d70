#pragma once
/// \file
/// The exceptions pgroups throws. Every error a user can cause is a subclass of
/// pgroups::Error whose message names the offending value and the rule it breaks;
/// each class has a fixed process exit code that the CLI uses (docs/reference/errors.md).

#include <stdexcept>
#include <string>
#include <utility>

namespace pgroups {

/// Process exit codes, one per error class; all below 128 so that they are never
/// mistaken for a death by signal.
enum class ExitCode : int {
  ok = 0,
  internal = 1,     ///< a bug in pgroups or an unexpected std::exception
  usage = 2,        ///< bad command line
  config = 3,       ///< a configuration that breaks a layout rule
  parse = 4,        ///< a configuration text that cannot be read
  io = 5,           ///< a file that cannot be opened
  backend = 6,      ///< MPI or NCCL reported an error
  mismatch = 7,     ///< ranks disagree on the configuration
  timeout = 8,      ///< a rank did not arrive in time
  state = 9,        ///< API misuse: a mode that was not created, a destroyed context
  verify_failed = 10,  ///< `pgroups verify` found a communicator that differs from the layout
};

/// Root of the hierarchy: catch this to handle everything pgroups throws.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ExitCode code = ExitCode::internal)
      : std::runtime_error(message), code_(code) {}
  [[nodiscard]] ExitCode exit_code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

/// A configuration value that breaks a rule of the layout (docs/reference/spec.md §1), e.g. a tensor
/// size that is not a perfect square in mode 2d.
class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& message) : Error(message, ExitCode::config) {}
};

/// Configuration text that is not well-formed, or has keys or types pgroups does not
/// know. The message starts with `source:line:column:` when a position is known.
class ParseError : public Error {
 public:
  explicit ParseError(const std::string& message) : Error(message, ExitCode::parse) {}
};

/// A file that cannot be read: missing, a directory, unreadable.
class IoError : public Error {
 public:
  explicit IoError(const std::string& message) : Error(message, ExitCode::io) {}
};

/// An error reported by a communication library; the message carries the call and the
/// library's own error string.
class BackendError : public Error {
 public:
  explicit BackendError(const std::string& message) : Error(message, ExitCode::backend) {}
};

/// Ranks of one job hold different configurations or options.
class MismatchError : public Error {
 public:
  explicit MismatchError(const std::string& message) : Error(message, ExitCode::mismatch) {}
};

/// A collective step did not complete within the configured timeout.
class TimeoutError : public Error {
 public:
  explicit TimeoutError(const std::string& message) : Error(message, ExitCode::timeout) {}
};

/// The API was used in a way its state does not allow (a mode that was not created,
/// a context that was destroyed).
class StateError : public Error {
 public:
  explicit StateError(const std::string& message) : Error(message, ExitCode::state) {}
};

/// An error carried from another rank whose class is not one of pgroups' (Python's
/// TypeError, ValueError, ...): kind() names it, so that a binding raises the same class.
class CarriedError : public Error {
 public:
  CarriedError(std::string kind, const std::string& message)
      : Error(message, ExitCode::config), kind_(std::move(kind)) {}
  [[nodiscard]] const std::string& kind() const noexcept { return kind_; }

 private:
  std::string kind_;
};

}  // namespace pgroups
