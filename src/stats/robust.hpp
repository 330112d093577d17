#pragma once

#include <span>

namespace pathbench {

// Median of the values (the mean of the two middle ones for an even count); 0 for none.
double median_of(std::span<const double> values);

// Median absolute deviation from the median, scaled by 1.4826 so that it estimates the standard
// deviation of normally distributed values (Rousseeuw & Croux 1993). Robust: one outlying run
// cannot inflate it the way it inflates a standard deviation. 0 for fewer than two values.
double scaled_mad(std::span<const double> values);

// One-sided upper tail of Student's t distribution with `df` degrees of freedom: P(T >= t).
// df <= 0 means the normal distribution.
double student_t_upper_tail(double t, double df);

}  // namespace pathbench
