// Colossal-AI's Python configs are read as a literal subset of Python, never executed;
// anything else is rejected with its position and what was found.

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/config/config_reader.hpp"
#include "reader_test_helpers.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

using test::make_config;

ParallelConfig read_python(std::string_view text) { return parse_config(text, ConfigFormat::python); }
std::string rejection(std::string_view text) { return test::parse_error(text, ConfigFormat::python); }

TEST(PythonConfigReader, ColossalStyleFileWithCommentsAndOtherSettingsIsRead) {
  EXPECT_EQ(read_python("# Colossal-AI config\n"
                        "BATCH_SIZE = 128\n"
                        "LEARNING_RATE = 3e-3   # a float, ignored\n"
                        "\n"
                        "parallel = dict(\n"
                        "    pipeline=2,  # two stages\n"
                        "\n"
                        "    tensor=dict(size=4, mode='2d', depth=None),\n"
                        ")\n"
                        "gradient_accumulation = 4\n"),
            make_config(2, 4, TensorMode::tensor_2d));
}

TEST(PythonConfigReader, LexicalFormsOfPythonAreAccepted) {
  EXPECT_EQ(read_python("\xEF\xBB\xBF\"\"\"Docstring with 'quotes' and\n"
                        "several lines.\"\"\"\n"
                        "a = 1; b = -2;\n"
                        "c = 'it\\'s \\x41\\u00e9\\n'  \n"
                        "d = \"\"\"multi\n"
                        "line\"\"\"\n"
                        "e = [1, 'two', [3.5, None], {'k': True},]\n"
                        "f = 1_000_000\n"
                        "g = .5e-3\n"
                        "parallel = \\\n"
                        "    dict(pipeline = - 3)\r\n"),
            make_config(-3, 1, TensorMode::none));
}

TEST(PythonConfigReader, ImportStatementIsRejectedWithItsPosition) {
  EXPECT_EQ(rejection("BATCH_SIZE = 1\nimport os\n"),
            "<config>:2:1: 'import' is not allowed (a Python config is read as literals, never executed)");
  EXPECT_EQ(rejection("from colossalai.amp import AMP_TYPE\n"),
            "<config>:1:1: 'from' is not allowed (a Python config is read as literals, never executed)");
}

TEST(PythonConfigReader, CallsOtherThanDictAreRejectedNamingTheCallee) {
  EXPECT_EQ(rejection("__import__(\"os\").system(\"touch /tmp/x\")"),
            "<config>:1:1: call of '__import__' is not allowed, only dict(...) (a Python config is read as literals, "
            "never executed)");
  EXPECT_EQ(rejection("exec('import os')"),
            "<config>:1:1: call of 'exec' is not allowed, only dict(...) (a Python config is read as literals, "
            "never executed)");
  EXPECT_EQ(rejection("parallel = dict(pipeline=eval('2'))"),
            "<config>:1:26: call of 'eval' is not allowed, only dict(...) (a Python config is read as literals, "
            "never executed)");
  EXPECT_EQ(rejection("parallel = dict(pipeline=int('2'))"),
            "<config>:1:26: call of 'int' is not allowed, only dict(...) (a Python config is read as literals, "
            "never executed)");
}

TEST(PythonConfigReader, AttributeAccessIsRejected) {
  EXPECT_EQ(rejection("fp16 = dict(mode=AMP_TYPE.NAIVE)"),
            "<config>:1:18: attribute access 'AMP_TYPE.NAIVE' is not allowed (a Python config is read as literals, "
            "never executed)");
  EXPECT_EQ(rejection("os.system('ls')"),
            "<config>:1:1: attribute access 'os.system' is not allowed (a Python config is read as literals, never "
            "executed)");
  EXPECT_EQ(rejection("x = dict(a=1).keys()"),
            "<config>:1:14: expected the end of the statement, found '.' (expressions are not allowed, only literal "
            "values)");
}

TEST(PythonConfigReader, LambdaAndOtherKeywordsAreRejected) {
  EXPECT_EQ(rejection("f = lambda: __import__('os')"),
            "<config>:1:5: 'lambda' is not allowed (a Python config is read as literals, never executed)");
  EXPECT_EQ(rejection("def f():\n    pass\n"),
            "<config>:1:1: 'def' is not allowed (a Python config is read as literals, never executed)");
  EXPECT_EQ(rejection("x = not True"),
            "<config>:1:5: 'not' is not allowed (a Python config is read as literals, never executed)");
  EXPECT_EQ(rejection("parallel = dict(if=1)"),
            "<config>:1:17: expected a keyword argument name=value in dict(), found name 'if'");
}

TEST(PythonConfigReader, FStringsAndOtherPrefixedStringsAreRejected) {
  EXPECT_EQ(rejection("x = f\"{__import__('os').system('id')}\""),
            "<config>:1:5: string prefix 'f' is not allowed, only plain '...' and \"...\" strings (a Python config "
            "is read as literals, never executed)");
  EXPECT_EQ(rejection("x = rb'\\x00'"),
            "<config>:1:5: string prefix 'rb' is not allowed, only plain '...' and \"...\" strings (a Python config "
            "is read as literals, never executed)");
}

TEST(PythonConfigReader, ExpressionsAreRejectedNamingTheOperator) {
  EXPECT_EQ(rejection("parallel = dict(pipeline=2 * 2)"),
            "<config>:1:28: expected ',' or ')', found '*' (expressions are not allowed, only literal values)");
  EXPECT_EQ(rejection("x = 1 + 1"),
            "<config>:1:7: expected the end of the statement, found '+' (expressions are not allowed, only literal "
            "values)");
  EXPECT_EQ(rejection("x += 1"),
            "<config>:1:3: expected '=' after the name 'x', found '+=' (expressions are not allowed, only literal "
            "values)");
  EXPECT_EQ(rejection("x = (1, 2)"),
            "<config>:1:5: expected a value, found '(' (expressions are not allowed, only literal values)");
  EXPECT_EQ(rejection("x = [1][0]"),
            "<config>:1:8: expected the end of the statement, found '[' (expressions are not allowed, only literal "
            "values)");
  EXPECT_EQ(rejection("x = -'2'"), "<config>:1:6: expected a number after '-', found string '2'");
  EXPECT_EQ(rejection("parallel = dict(pipeline := 2)"),
            "<config>:1:26: expected '=' after the keyword 'pipeline' in dict(), found ':=' (expressions are not "
            "allowed, only literal values)");
  EXPECT_EQ(rejection("x: int = 1"), "<config>:1:2: expected '=' after the name 'x', found ':'");
  EXPECT_EQ(rejection("1 + 1"), "<config>:1:1: expected an assignment 'name = value', found integer 1");
}

TEST(PythonConfigReader, NamesAreNotResolved) {
  EXPECT_EQ(rejection("SIZE = 4\nparallel = dict(tensor=SIZE)"), "<config>:2:24: name 'SIZE' is not a literal value");
  EXPECT_EQ(rejection("x = true"), "<config>:1:5: name 'true' is not a literal value (did you mean True?)");
  EXPECT_EQ(rejection("a = b = 1"), "<config>:1:5: name 'b' is not a literal value");
  EXPECT_EQ(rejection("dict = 1"), "<config>:1:1: assigning to 'dict' is not allowed: dict(...) must keep its meaning");
}

TEST(PythonConfigReader, DictArgumentsMustBeKeywordsAndLiteralKeysStrings) {
  EXPECT_EQ(rejection("parallel = dict({'pipeline': 2})"),
            "<config>:1:17: expected a keyword argument name=value in dict(), found '{' (expressions are not "
            "allowed, only literal values)");
  EXPECT_EQ(rejection("parallel = dict(**other)"),
            "<config>:1:17: expected a keyword argument name=value in dict(), found '**' (expressions are not "
            "allowed, only literal values)");
  EXPECT_EQ(rejection("parallel = dict(pipeline)"),
            "<config>:1:25: expected '=' after the keyword 'pipeline' in dict(), found ')'");
  EXPECT_EQ(rejection("parallel = {1: 2}"), "<config>:1:13: dictionary keys must be strings, found integer 1");
  EXPECT_EQ(rejection("parallel = {'a' 2}"), "<config>:1:17: expected ':' after a dictionary key, found integer 2");
}

TEST(PythonConfigReader, UnterminatedStringIsReportedAtItsOpeningQuote) {
  EXPECT_EQ(rejection("parallel = dict(tensor=dict(mode='2d))\n"), "<config>:1:34: unterminated string");
  EXPECT_EQ(rejection("x = 1\ny = \"\"\"never\nclosed\n"), "<config>:2:5: unterminated triple-quoted string");
  EXPECT_EQ(rejection("x = 'ends with a backslash\\"), "<config>:1:5: unterminated string");
}

TEST(PythonConfigReader, UnclosedBracketIsReportedAtTheEnd) {
  EXPECT_EQ(rejection("parallel = dict(pipeline=2,\n"),
            "<config>:2:1: expected a keyword argument name=value in "
            "dict(), found end of file");
}

TEST(PythonConfigReader, IndentationIsRejected) {
  EXPECT_EQ(rejection("x = 1\n  y = 2\n"), "<config>:2:3: unexpected indentation");
}

TEST(PythonConfigReader, NumbersOutsideDecimalLiteralsAreRejected) {
  EXPECT_EQ(rejection("x = 0x10"), "<config>:1:5: only decimal numbers are read, found '0x10'");
  EXPECT_EQ(rejection("x = 007"), "<config>:1:5: leading zeros are not allowed in the integer '007'");
  EXPECT_EQ(rejection("x = 12abc"), "<config>:1:5: invalid number '12abc'");
  EXPECT_EQ(rejection("x = 1j"), "<config>:1:5: invalid number '1j'");
  EXPECT_EQ(rejection("x = 1__0"), "<config>:1:5: invalid number '1__0'");
}

TEST(PythonConfigReader, UnsupportedEscapesAndStrayCharactersAreRejected) {
  EXPECT_EQ(rejection("x = '\\q'"), "<config>:1:6: unsupported escape sequence '\\\\q' in a string");
  EXPECT_EQ(rejection("x = '\\x4'"), "<config>:1:6: truncated escape sequence '\\\\x4\\'': it needs 2 hex digits");
  EXPECT_EQ(rejection("x = '\\U00110000'"), "<config>:1:6: escape sequence '\\\\U00110000' is not a Unicode character");
  EXPECT_EQ(rejection("x = $"), "<config>:1:5: unexpected character '$'");
  EXPECT_EQ(rejection("caf\xC3\xA9 = 1"), "<config>:1:4: unexpected character '\\xc3\\xa9'");
  EXPECT_EQ(rejection("x = 1 \\ 2"), "<config>:1:7: unexpected character '\\\\' (a backslash only joins lines)");
}

TEST(PythonConfigReader, NothingInTheFileIsEverExecuted) {
  const std::filesystem::path marker =
      std::filesystem::temp_directory_path() / ("pgroups_config_marker_" + std::to_string(::getpid()));
  std::filesystem::remove(marker);
  const std::string touch = "touch " + marker.string();
  // Each attempt is refused at its first construct that is no literal, with the rule.
  const std::string rule = " (a Python config is read as literals, never executed)";
  const std::pair<std::string, std::string> attempts[] = {
      {"import os\nos.system('" + touch + "')\n", "<config>:1:1: 'import' is not allowed" + rule},
      {"__import__('os').system('" + touch + "')\n",
       "<config>:1:1: call of '__import__' is not allowed, only dict(...)" + rule},
      {"exec(\"__import__('os').system('" + touch + "')\")\n",
       "<config>:1:1: call of 'exec' is not allowed, only dict(...)" + rule},
      {"x = eval(\"__import__('os').system('" + touch + "')\")\n",
       "<config>:1:5: call of 'eval' is not allowed, only dict(...)" + rule},
      {"x = (lambda: __import__('os').system('" + touch + "'))()\n",
       "<config>:1:5: expected a value, found '(' (expressions are not allowed, only literal values)"},
      {"x = f\"{__import__('os').system('" + touch + "')}\"\n",
       "<config>:1:5: string prefix 'f' is not allowed, only plain '...' and \"...\" strings" + rule},
      {"parallel = dict(pipeline=__import__('os').system('" + touch + "'))\n",
       "<config>:1:26: call of '__import__' is not allowed, only dict(...)" + rule},
      {"x = [__import__('os').system('" + touch + "') for _ in [1]]\n",
       "<config>:1:6: call of '__import__' is not allowed, only dict(...)" + rule},
      {"open('" + marker.string() + "', 'w')\n", "<config>:1:1: call of 'open' is not allowed, only dict(...)" + rule},
  };
  for (const auto& [attempt, message] : attempts) {
    EXPECT_EQ(test::message_of<ParseError>([&] { (void)read_python(attempt); }), message) << attempt;
  }
  EXPECT_FALSE(std::filesystem::exists(marker));
}

}  // namespace
}  // namespace pgroups
