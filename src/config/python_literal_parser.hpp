#pragma once
// Colossal-AI's Python configuration files, read as a literal subset of Python and never
// executed. Internal to pgroups::config.

#include <string_view>

#include "value_tree.hpp"

namespace pgroups::detail {

/// Reads `text` as a sequence of top-level statements and feeds the builder a table of
/// the assigned names. The subset:
///
///   file       := { statement (NEWLINE | ';') } END
///   statement  := NAME '=' value | STRING          (a bare string is a docstring)
///   value      := ['-'] INTEGER | ['-'] FLOAT | STRING | True | False | None
///               | 'dict' '(' [ NAME '=' value { ',' NAME '=' value } [','] ] ')'
///               | '{' [ STRING ':' value { ',' STRING ':' value } [','] ] '}'
///               | '[' [ value { ',' value } [','] ] ']'
///
/// with Python's lexical rules for comments (#), blank lines, lines joined inside
/// brackets or by a trailing backslash, decimal integers and floats (with `_`
/// separators), and '...', "...", '''...''' and """...""" strings with the usual escapes.
/// Integers of any length are read; those outside int64 become ValueKind::big_integer.
///
/// Everything else is a ParseError "source:line:col: ..." that names what was found:
/// import and every other keyword, calls other than dict(...), attribute access, names
/// other than True/False/None, operators, prefixed strings (f"", r"", b""), indentation,
/// NUL bytes. Nesting is bounded by the builder (kMaxNesting) before each recursive
/// step. Linear time in the size of `text`.
void parse_python_literals(std::string_view text, std::string_view source, ValueTreeBuilder& builder);

}  // namespace pgroups::detail
