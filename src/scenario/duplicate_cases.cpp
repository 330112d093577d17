#include "scenario/duplicate_cases.hpp"

#include "core/errors.hpp"

namespace pathbench {

bool DuplicateCases::admit(std::size_t file_index, const CaseSpec& spec) {
  auto [it, inserted] = seen_.try_emplace(spec.id);
  FirstDefinition& first = it->second;
  if (inserted) {
    first = FirstDefinition{file_index,    spec.file, spec.repetitions,
                            spec.min_time, spec.gate, file_index};
    return true;
  }
  if (first.last_file_index == file_index) {
    throw InputError(spec.file, spec.pointer,
                     "case " + spec.id +
                         " is also produced by an earlier scenario of this file; case ids must "
                         "be unique within a file");
  }
  first.last_file_index = file_index;

  const auto key = std::make_pair(file_index, first.file_index);
  auto [slot, added] = overlap_of_.try_emplace(key, overlaps_.size());
  if (added) overlaps_.push_back(Overlap{spec.file, first.file});
  Overlap& overlap = overlaps_[slot->second];
  ++overlap.cases;
  const bool repetitions = spec.repetitions != first.repetitions;
  const bool min_time = spec.min_time != first.min_time;
  const bool gate = spec.gate != first.gate;
  overlap.repetitions = overlap.repetitions || repetitions;
  overlap.min_time = overlap.min_time || min_time;
  overlap.gate = overlap.gate || gate;
  if (repetitions || min_time || gate) ++overlap.differing;
  return false;
}

std::vector<std::string> DuplicateCases::notes() const {
  std::vector<std::string> out;
  for (const Overlap& o : overlaps_) {
    const bool one = o.cases == 1;
    std::string text =
        std::to_string(o.cases) + (one ? " case of " : " cases of ") + o.later_file +
        (one ? " is" : " are") + " also in " + o.first_file +
        (one ? "; it runs once, as defined there" : "; each runs once, as defined there");
    if (o.differing > 0) {
      std::string fields;
      for (const auto& [differs, name] :
           {std::pair{o.repetitions, "repetitions"}, std::pair{o.min_time, "min_time"},
            std::pair{o.gate, "gate"}}) {
        if (!differs) continue;
        if (!fields.empty()) fields += '/';
        fields += name;
      }
      text += "; " +
              (one ? std::string("it differs")
                   : std::to_string(o.differing) +
                         (o.differing == 1 ? " of them differs" : " of them differ")) +
              " in " + fields + ": the first file's settings are used";
    }
    out.push_back(std::move(text));
  }
  return out;
}

}  // namespace pathbench
