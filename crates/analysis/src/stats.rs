//! The shared statistics, as the analyses use them.

pub use hwcal_stats::{linear_regression as regression, mad, median, min_and_next, quantile, spread};
