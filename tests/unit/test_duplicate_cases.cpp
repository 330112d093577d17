// Case ids repeated across the files of one run: the first definition runs, later ones are
// counted per pair of files; a repeat within one file stays an error.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "scenario/duplicate_cases.hpp"

namespace pathbench::test_duplicate_cases {
namespace {

CaseSpec spec(const std::string& id, const std::string& file, int repetitions = 9,
              double min_time = 0.05, nlohmann::ordered_json gate = nullptr) {
  CaseSpec c;
  c.id = id;
  c.file = file;
  c.pointer = "/scenarios/0";
  c.repetitions = repetitions;
  c.min_time = min_time;
  c.gate = std::move(gate);
  return c;
}

TEST(DuplicateCases, DistinctIdsAreAllAdmittedWithoutNotes) {
  DuplicateCases d;
  EXPECT_TRUE(d.admit(0, spec("a", "x.json")));
  EXPECT_TRUE(d.admit(0, spec("b", "x.json")));
  EXPECT_TRUE(d.admit(1, spec("c", "y.json")));
  EXPECT_TRUE(d.notes().empty());
}

TEST(DuplicateCases, LaterFileCopiesAreDroppedWithOneNotePerPair) {
  DuplicateCases d;
  EXPECT_TRUE(d.admit(0, spec("a", "s/default.json")));
  EXPECT_TRUE(d.admit(0, spec("b", "s/default.json")));
  EXPECT_FALSE(d.admit(1, spec("a", "s/copy.json")));
  EXPECT_FALSE(d.admit(1, spec("b", "s/copy.json")));
  EXPECT_TRUE(d.admit(1, spec("c", "s/copy.json")));
  const auto notes = d.notes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "2 cases of s/copy.json are also in s/default.json; each runs once, as defined there");
}

TEST(DuplicateCases, SaysWhichSettingsDiffer) {
  DuplicateCases d;
  const nlohmann::ordered_json gate15 = {{"threshold_pct", 15}};
  EXPECT_TRUE(d.admit(0, spec("a", "d.json", 5, 0.05, gate15)));
  EXPECT_TRUE(d.admit(0, spec("b", "d.json", 5, 0.05, gate15)));
  EXPECT_TRUE(d.admit(0, spec("c", "d.json", 5, 0.05, gate15)));
  EXPECT_FALSE(d.admit(1, spec("a", "h.json", 9, 0.05, gate15)));   // repetitions
  EXPECT_FALSE(d.admit(1, spec("b", "h.json", 5, 0.05, nullptr)));  // gate
  EXPECT_FALSE(d.admit(1, spec("c", "h.json", 5, 0.05, gate15)));   // same
  const auto notes = d.notes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "3 cases of h.json are also in d.json; each runs once, as defined there; 2 of them "
            "differ in repetitions/gate: the first file's settings are used");
}

TEST(DuplicateCases, SingularWording) {
  DuplicateCases d;
  EXPECT_TRUE(d.admit(0, spec("a", "d.json", 5, 0.05)));
  EXPECT_FALSE(d.admit(1, spec("a", "h.json", 5, 0.1)));
  const auto notes = d.notes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "1 case of h.json is also in d.json; it runs once, as defined there; it differs in "
            "min_time: the first file's settings are used");
}

TEST(DuplicateCases, OneNotePerPairOfFilesInTheOrderMet) {
  DuplicateCases d;
  EXPECT_TRUE(d.admit(0, spec("a", "1.json")));
  EXPECT_TRUE(d.admit(1, spec("b", "2.json")));
  EXPECT_FALSE(d.admit(2, spec("b", "3.json")));
  EXPECT_FALSE(d.admit(2, spec("a", "3.json")));
  const auto notes = d.notes();
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0], "1 case of 3.json is also in 2.json; it runs once, as defined there");
  EXPECT_EQ(notes[1], "1 case of 3.json is also in 1.json; it runs once, as defined there");
}

TEST(DuplicateCases, RepeatWithinOneFileIsBadInput) {
  DuplicateCases d;
  EXPECT_TRUE(d.admit(0, spec("a", "x.json")));
  CaseSpec again = spec("a", "x.json");
  again.pointer = "/scenarios/1";
  try {
    d.admit(0, again);
    FAIL() << "a repeated id within one file must throw";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "x.json");
    EXPECT_EQ(e.pointer(), "/scenarios/1");
    EXPECT_NE(std::string(e.what()).find("is also produced by an earlier scenario"),
              std::string::npos)
        << e.what();
  }
}

TEST(DuplicateCases, RepeatWithinALaterFileIsStillBadInput) {
  // The id first came from file 0; file 1 produces it twice: the second time is file 1's own
  // mistake, whatever file 0 did.
  DuplicateCases d;
  EXPECT_TRUE(d.admit(0, spec("a", "x.json")));
  EXPECT_FALSE(d.admit(1, spec("a", "y.json")));
  EXPECT_THROW(d.admit(1, spec("a", "y.json")), InputError);
}

}  // namespace
}  // namespace pathbench::test_duplicate_cases
