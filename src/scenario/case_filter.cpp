#include "scenario/case_filter.hpp"

#include <re2/re2.h>

#include "core/errors.hpp"

namespace pathbench {

CaseFilter::CaseFilter(const std::string& pattern, const std::string& option) : pattern_(pattern) {
  if (pattern.empty()) return;
  RE2::Options options;
  options.set_max_mem(kCaseFilterMaxMemBytes);
  options.set_log_errors(false);  // the error goes into the InputError, not to stderr as well
  auto re = std::make_unique<re2::RE2>(pattern, options);
  if (re->error_code() == RE2::ErrorPatternTooLarge) {
    throw InputError::option(option, "the regular expression needs more than " +
                                         std::to_string(kCaseFilterMaxMemBytes >> 20) +
                                         " MiB to compile: " + re->error());
  }
  if (!re->ok()) {
    throw InputError::option(option, "not a valid regular expression (RE2 syntax): " + re->error());
  }
  re_ = std::move(re);
}

CaseFilter::~CaseFilter() = default;
CaseFilter::CaseFilter(CaseFilter&&) noexcept = default;
CaseFilter& CaseFilter::operator=(CaseFilter&&) noexcept = default;

bool CaseFilter::matches(const std::string& id) const {
  return re_ == nullptr || RE2::PartialMatch(id, *re_);
}

std::string CaseFilter::exact_ids_pattern(const std::vector<std::string>& ids) {
  std::string pattern = "^(?:";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) pattern += '|';
    pattern += RE2::QuoteMeta(ids[i]);
  }
  return pattern + ")$";
}

}  // namespace pathbench
