#include "integer_option.hpp"

#include "pgroups/common/decimal_integer.hpp"

namespace pgroups::cli {

std::string shown_option_name(const std::string& names) {
  const std::size_t comma = names.rfind(',');
  return comma == std::string::npos ? names : names.substr(comma + 1);
}

std::int64_t parse_integer_option(const std::string& text, const std::string& option, std::int64_t min,
                                  std::int64_t max) {
  const IntegerReading reading = read_decimal_integer(text);
  if (reading.status != IntegerStatus::ok) {
    throw CLI::ValidationError(integer_problem(reading, text, option));
  }
  if (reading.value < min || reading.value > max) {
    throw CLI::ValidationError(integer_range_problem(reading.value, min, max, option));
  }
  return reading.value;
}

CLI::Option* add_integer_option(CLI::App& app, const std::string& names, std::function<void(std::int64_t)> store,
                                const std::string& description, std::int64_t min, std::int64_t max) {
  return app
      .add_option_function<std::string>(
          names,
          [store = std::move(store), shown = shown_option_name(names), min, max](const std::string& text) {
            store(parse_integer_option(text, shown, min, max));
          },
          description)
      ->type_name("INT");
}

}  // namespace pgroups::cli
