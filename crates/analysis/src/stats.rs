//! Small order statistics used by the analyses (no clock, no I/O).

/// Median (NaNs ignored); 0 for no data.
pub fn median(xs: &[f64]) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Smallest and second-smallest finite values.
pub fn min_and_next(xs: &[f64]) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => None,
        1 => Some((v[0], v[0])),
        _ => Some((v[0], v[1])),
    }
}

/// Least-squares line y = a + b x: (a, b, sum of squared residuals).
pub fn regression(x: &[f64], y: &[f64]) -> (f64, f64, f64) {
    let n = x.len().min(y.len());
    if n == 0 {
        return (0.0, 0.0, 0.0);
    }
    let nf = n as f64;
    let mx = x.iter().take(n).sum::<f64>() / nf;
    let my = y.iter().take(n).sum::<f64>() / nf;
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for i in 0..n {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    let b = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let a = my - b * mx;
    let chi2 = (0..n).map(|i| (y[i] - a - b * x[i]).powi(2)).sum();
    (a, b, chi2)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn basics() {
        assert_eq!(median(&[3.0, f64::NAN, 1.0, 2.0]), 2.0);
        assert_eq!(min_and_next(&[5.0, 1.0, 3.0]), Some((1.0, 3.0)));
        assert_eq!(min_and_next(&[]), None);
        let (a, b, c) = regression(&[0.0, 1.0, 2.0], &[0.0, 2.0, 4.0]);
        assert!(a.abs() < 1e-12 && (b - 2.0).abs() < 1e-12 && c < 1e-20);
    }
}
