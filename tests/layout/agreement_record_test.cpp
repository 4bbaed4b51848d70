// The agreement's records: an encoding in which no two configurations read the same, and
// errors carried so that every rank raises what one rank hit.

#include "pgroups/layout/agreement_record.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pgroups/common/error.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

std::string encoded(std::initializer_list<SettingField> fields) {
  const std::vector<SettingField> list(fields);
  return encode_settings(list);
}

TEST(AgreementRecord, ConfigurationsThatNaiveTextConfusesEncodeDifferently) {
  // Joined by spaces, each pair below reads "a=1 b=2".
  EXPECT_NE(encoded({{"a", "1 b=2"}}), encoded({{"a", "1"}, {"b", "2"}}));
  EXPECT_NE(encoded({{"a", "1"}, {"b", "2"}}), encoded({{"a=1 b", "2"}}));
  // Concatenated, these read "ab".
  EXPECT_NE(encoded({{"x", "ab"}, {"y", ""}}), encoded({{"x", "a"}, {"y", "b"}}));
  EXPECT_NE(encoded({{"x", ""}}), encoded({}));
  EXPECT_NE(encoded({{"settings", "1:a"}}), encoded({{"settings", "1"}, {"a", ""}}));
}

TEST(AgreementRecord, AnErrorRecordIsNeverASettingsRecord) {
  EXPECT_TRUE(is_error_record(encode_error("ConfigError", "tensor 3 is bad")));
  EXPECT_FALSE(is_error_record(encoded({{"error", "ConfigError"}, {"message", "tensor 3 is bad"}})));
  EXPECT_FALSE(is_error_record("6:!error"));
  EXPECT_FALSE(is_error_record(""));
}

TEST(AgreementRecord, RecordsAreShownByTheirTextField) {
  EXPECT_EQ(record_text(encoded({{"a", "1"}, {"text", "world_size=8 pipeline=2"}})), "world_size=8 pipeline=2");
  EXPECT_EQ(record_text(encoded({{"a", "1"}, {"b", "x y"}})), "a=1 b=x y");
  EXPECT_EQ(record_text("pipeline=2 tensor=4"), "pipeline=2 tensor=4") << "text that is no record shows as is";
}

TEST(AgreementRecord, EqualSettingsOnEveryRankPassAndOneMoreVariantIsAMismatch) {
  std::vector<std::string> records(4, encoded({{"a", "1"}}));
  EXPECT_EQ(test::message_of<Error>([&] { judge_records(records, "configuration"); }), "no exception");
  records.push_back(encoded({{"a", "2"}}));
  EXPECT_EQ(test::message_of<MismatchError>([&] { judge_records(records, "configuration"); }),
            "configuration mismatch across 5 ranks: ranks 0-3 hold 'a=1'; rank 4 holds 'a=2'");
}

TEST(AgreementRecord, DifferentSettingsAreAMismatchNamingEachVariantsRanks) {
  const std::vector<std::string> records = {encoded({{"a", "1 b=2"}}), encoded({{"a", "1 b=2"}}),
                                            encoded({{"a", "1"}, {"b", "2"}})};
  EXPECT_EQ(test::message_of<MismatchError>([&] { judge_records(records, "configuration"); }),
            "configuration mismatch across 3 ranks: ranks 0-1 hold 'a=1 b=2'; rank 2 holds 'a=1 b=2'");
}

TEST(AgreementRecord, AnErrorOfOneRankIsRaisedWithItsClassNamingTheRank) {
  const std::string fine = encoded({{"a", "1"}});
  const std::vector<std::string> records = {fine, encode_error("ConfigError", "device -1 is invalid"), fine};
  EXPECT_EQ(test::message_of<ConfigError>([&] { judge_records(records, "configuration"); }),
            "rank 1 hit before the configuration agreement: device -1 is invalid");
}

TEST(AgreementRecord, AnErrorOfAClassPgroupsDoesNotHaveKeepsItsName) {
  const std::vector<std::string> records = {encode_error("TypeError", "tensor must be an int, not '4' (str)"),
                                            encode_error("TypeError", "tensor must be an int, not '4' (str)")};
  try {
    judge_records(records, "configuration");
    FAIL() << "no exception";
  } catch (const CarriedError& error) {
    EXPECT_EQ(error.kind(), "TypeError");
    EXPECT_STREQ(error.what(),
                 "ranks 0-1 hit before the configuration agreement: tensor must be an int, not '4' (str)");
  }
}

TEST(AgreementRecord, TheLowestErringRankDecidesTheClassAndEveryErrorIsShown) {
  const std::vector<std::string> records = {encoded({{"a", "1"}}), encode_error("IoError", "no file x.toml"),
                                            encode_error("ConfigError", "tensor 3")};
  EXPECT_EQ(test::message_of<IoError>([&] { judge_records(records, "configuration"); }),
            "rank 1 hit before the configuration agreement: no file x.toml; rank 2 hit before the configuration "
            "agreement: tensor 3");
}

TEST(AgreementRecord, TheDigestIsFnv1a) {
  EXPECT_EQ(settings_digest(""), 14695981039346656037ULL);
  EXPECT_EQ(settings_digest("a"), 0xaf63dc4c8601ec8cULL);
}

}  // namespace
}  // namespace pgroups
