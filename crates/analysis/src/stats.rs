//! The shared statistics, as the analyses use them.

pub use hwcal_stats::{
    linear_regression as regression, mad, median, median_ci95, min_and_next, quantile, spread,
};
